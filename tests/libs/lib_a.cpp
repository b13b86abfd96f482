#include "regiontrace/regiontrace.hpp"

int lib_b_work(int x);

int lib_a_work(int x) {
  RT_REGION("lib_a.work");
  return lib_b_work(x) + 1;
}
