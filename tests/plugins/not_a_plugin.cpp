// A shared library that is not a sink, named like one.
extern "C" int some_unrelated_function() {
  return 42;
}
