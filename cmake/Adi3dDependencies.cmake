# Every dependency comes from a Debian package; a missing one stops configure with the
# package to install (scripts/setup-deps installs them all).

# adi3d_require(<find_package name> <found variable> <what> <Debian package> [args...])
macro(adi3d_require name found what package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${found})
    message(FATAL_ERROR
      "adi3d: ${what} was not found. Install the Debian package '${package}' "
      "(apt-get install ${package}) or run scripts/setup-deps as root.")
  endif()
endmacro()

set(HDF5_PREFER_PARALLEL FALSE)
adi3d_require(OpenMP OpenMP_CXX_FOUND "OpenMP for C++" "libgomp1 (comes with g++)" COMPONENTS CXX)
adi3d_require(Boost Boost_PROGRAM_OPTIONS_FOUND "Boost.Program_options" "libboost-program-options-dev"
              1.74 COMPONENTS program_options)
adi3d_require(HDF5 HDF5_FOUND "HDF5 (C library)" "libhdf5-dev" COMPONENTS C)
adi3d_require(VTK VTK_FOUND "VTK 9 (CommonCore, CommonDataModel, IOXML)" "libvtk9-dev"
              9 COMPONENTS CommonCore CommonDataModel IOXML)
adi3d_require(muparser muparser_FOUND "muparser" "libmuparser-dev")
adi3d_require(fmt fmt_FOUND "fmt" "libfmt-dev")
adi3d_require(spdlog spdlog_FOUND "spdlog" "libspdlog-dev")
adi3d_require(nlohmann_json nlohmann_json_FOUND "nlohmann-json" "nlohmann-json3-dev" 3)
adi3d_require(LAPACK LAPACK_FOUND "LAPACK" "liblapack-dev")
# The direct Poisson solve's transforms on the CPU (double and float; FindFFTW3.cmake).
adi3d_require(FFTW3 FFTW3_FOUND "FFTW 3 (fftw3 and fftw3f)" "libfftw3-dev")
if(ADI3D_TESTS)
  adi3d_require(GTest GTest_FOUND "GoogleTest" "libgtest-dev")
endif()
if(ADI3D_CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
