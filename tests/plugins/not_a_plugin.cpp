// A library in the plugins folder that does not export tg_plugin_query_v1.
extern "C" __attribute__((visibility("default"))) int tg_not_a_plugin() { return 1; }
