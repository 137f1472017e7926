"""Enable pytester for the plugin tests without ``pytest_plugins`` (which pytest only allows in the
top-level conftest): load it when this conftest is registered."""


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")
