// libtgtest_dep.so: the library a test plugin links but that is not shipped beside it.
extern "C" __attribute__((visibility("default"))) int tg_test_dep_value() { return 42; }
