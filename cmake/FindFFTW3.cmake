# FFTW 3 in double and float (Debian's libfftw3-dev ships pkg-config files, no CMake
# package). Defines FFTW3_FOUND and the target FFTW3::fftw3 (both precisions).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(ADI3D_FFTW3 QUIET IMPORTED_TARGET fftw3 fftw3f)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3 REQUIRED_VARS ADI3D_FFTW3_FOUND)
if(FFTW3_FOUND AND NOT TARGET FFTW3::fftw3)
  add_library(FFTW3::fftw3 INTERFACE IMPORTED)
  target_link_libraries(FFTW3::fftw3 INTERFACE PkgConfig::ADI3D_FFTW3)
endif()
