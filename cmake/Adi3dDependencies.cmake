# Every dependency comes from a Debian package; a missing one stops configure with the
# package to install (scripts/setup-deps installs them all).
function(adi3d_missing what package)
  message(FATAL_ERROR
    "adi3d: ${what} was not found. Install the Debian package '${package}' "
    "(apt-get install ${package}) or run scripts/setup-deps as root.")
endfunction()

find_package(OpenMP COMPONENTS CXX)
if(NOT OpenMP_CXX_FOUND)
  adi3d_missing("OpenMP for C++" "libgomp1 (comes with g++)")
endif()

find_package(Boost 1.74 COMPONENTS program_options QUIET)
if(NOT Boost_PROGRAM_OPTIONS_FOUND)
  adi3d_missing("Boost.Program_options" "libboost-program-options-dev")
endif()

set(HDF5_PREFER_PARALLEL FALSE)
find_package(HDF5 COMPONENTS C QUIET)
if(NOT HDF5_FOUND)
  adi3d_missing("HDF5 (C library)" "libhdf5-dev")
endif()

find_package(VTK 9 COMPONENTS CommonCore CommonDataModel IOXML QUIET)
if(NOT VTK_FOUND)
  adi3d_missing("VTK 9 (CommonCore, CommonDataModel, IOXML)" "libvtk9-dev")
endif()

find_package(muparser QUIET)
if(NOT muparser_FOUND)
  adi3d_missing("muparser" "libmuparser-dev")
endif()

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  adi3d_missing("fmt" "libfmt-dev")
endif()

find_package(spdlog QUIET)
if(NOT spdlog_FOUND)
  adi3d_missing("spdlog" "libspdlog-dev")
endif()

find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  adi3d_missing("nlohmann-json" "nlohmann-json3-dev")
endif()

find_package(LAPACK QUIET)
if(NOT LAPACK_FOUND)
  adi3d_missing("LAPACK" "liblapack-dev")
endif()

if(ADI3D_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    adi3d_missing("GoogleTest" "libgtest-dev")
  endif()
endif()

if(ADI3D_CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
