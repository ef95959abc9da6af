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

# With MPI, parallel HDF5 (MPI-IO): the ranks of a distributed run write their slabs into one
# file together. The serial and the parallel library cannot share a process.
set(HDF5_PREFER_PARALLEL ${ADI3D_MPI})
# A build directory configured before the switch holds serial HDF5 in its cache: forget it.
if(ADI3D_MPI AND (HDF5_C_COMPILER_EXECUTABLE MATCHES "h5cc$" OR HDF5_C_LIBRARY_hdf5 MATCHES "/serial/"))
  get_cmake_property(adi3d_cached CACHE_VARIABLES)
  foreach(variable IN LISTS adi3d_cached)
    if(variable MATCHES "^HDF5_")
      unset(${variable} CACHE)
    endif()
  endforeach()
endif()
adi3d_require(OpenMP OpenMP_CXX_FOUND "OpenMP for C++" "libgomp1 (comes with g++)" COMPONENTS CXX)
adi3d_require(Boost Boost_PROGRAM_OPTIONS_FOUND "Boost.Program_options" "libboost-program-options-dev"
              1.74 COMPONENTS program_options)
if(ADI3D_MPI)
  adi3d_require(HDF5 HDF5_FOUND "parallel HDF5 (C library, Open MPI)" "libhdf5-openmpi-dev" COMPONENTS C)
  if(NOT HDF5_IS_PARALLEL)
    message(FATAL_ERROR "adi3d: the HDF5 found (${HDF5_C_LIBRARIES}) is serial, but an MPI build writes through "
                        "parallel HDF5. Install libhdf5-openmpi-dev, or configure with -DADI3D_MPI=OFF.")
  endif()
else()
  adi3d_require(HDF5 HDF5_FOUND "HDF5 (C library)" "libhdf5-dev" COMPONENTS C)
endif()
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
