# SystemC 2.3.4 ships only a pkg-config file on Debian: wrap it as an imported target.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc>=2.3.3)
add_library(systemc::systemc ALIAS PkgConfig::SYSTEMC)
