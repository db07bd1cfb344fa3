// Boost.JSON compiled into the fuzz targets from its sources (header-only mode), so that the
// sanitizers and the fuzzer's coverage see inside the JSON parser too.
#include <boost/json/src.hpp>
