#include "regiontrace/regiontrace.hpp"

int lib_b_work(int x) {
  RT_REGION("lib_b.work");
  return x * 2;
}
