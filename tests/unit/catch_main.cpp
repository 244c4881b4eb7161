// The Catch2 v2 main() for the unit tests. Kept in its own translation unit so it is compiled once.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
