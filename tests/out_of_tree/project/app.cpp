#include <regiontrace/regiontrace.hpp>

int main() {
  RT_REGION("app");
  {
    RT_REGION("load");
    RT_REGION("parse");
  }
  return 0;
}
