// The profiles that ship with regiontrace (config/profiles/ in the source,
// <datadir>/regiontrace/profiles once installed, inside the package when pip
// installed it), reachable by bare name: `regiontrace check quickstart.yaml`
// and REGIONTRACE_CONFIG=kernels.yaml work from any folder, as a user who
// never saw the install prefix types them.
#pragma once

#include <string>
#include <vector>

namespace regiontrace::detail {

// The folder of the shipped profiles, found from where libregiontrace.so
// itself is (installs move); empty when this library has none beside it.
std::string shipped_profiles_dir();

// A profile name as the user gave it, made into the file to read: a path
// that exists, or one with a folder in it, stays as it is; a bare name that
// is no file in the working folder is the shipped profile of that name when
// there is one. Anything else stays as it is, for the reader's error.
std::string resolve_profile_path(const std::string& path);

// Names of the shipped profiles (sorted), for messages.
std::vector<std::string> shipped_profile_names();

}  // namespace regiontrace::detail
