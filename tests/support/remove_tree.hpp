// Removes a folder and everything under it, for tests that link libtorch.
#pragma once

#include <string>

namespace regiontrace::test {

// Removes `path` and everything under it, as `rm -rf` does; quietly does
// nothing when it is not there. Not std::filesystem::remove_all: the PyPI
// libtorch 2.5-2.11 exports its own copy of that (pytorch/pytorch#133437),
// which wins the symbol lookup in a program linked with it and jumps to a
// null recursive_directory_iterator::__erase on a GPU image's libstdc++.
// tests/elf/check_no_remove_all.sh keeps the call out of such programs.
void remove_tree(const std::string& path);

}  // namespace regiontrace::test
