// A translation unit that includes one header, TG_PROBE_HEADER, with the include directories
// of one layer: tests/layers/CMakeLists.txt builds it to show which headers a layer can see.
#include TG_PROBE_HEADER
