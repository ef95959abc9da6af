# CPack: `cpack -G DEB` in the build folder (build/release) makes adi3d_<version>_amd64.deb
# from the install rules (cmake/Adi3dInstall.cmake), installed under /usr. scripts/package-check
# builds, installs and tries it (CI).
set(CPACK_PACKAGE_NAME adi3d)
set(CPACK_PACKAGE_VENDOR "adi3d")
set(CPACK_PACKAGE_CONTACT "adi3d maintainers <maintainers@users.noreply.a-seed-85bf0a36.example>"
    CACHE STRING "Maintainer named in the packages")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

if(ADI3D_CUDA)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ADI solvers for the 3D heat and Poisson equations (CPU and CUDA)")
  set(adi3d_cuda_libs "cudart, cusparse, nvrtc")
  if(ADI3D_NCCL)
    string(APPEND adi3d_cuda_libs ", NCCL")
  endif()
  string(CONCAT adi3d_cuda_note
    "This build has the CUDA backend. It needs the CUDA ${CUDAToolkit_VERSION_MAJOR} runtime libraries\n"
    "(${adi3d_cuda_libs}) of NVIDIA's CUDA toolkit in ${CUDAToolkit_LIBRARY_DIR}, where it was\n"
    "built; they are not Debian packages, so this package cannot depend on them.")
else()
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ADI solvers for the 3D heat and Poisson equations (CPU)")
  set(adi3d_cuda_note "This build has the CPU backend only.")
endif()
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "adi3d runs 3D heat (Douglas ADI time stepping) and Poisson (ADI iteration) problems from\n"
  "input decks, on the CPU (OpenMP) or an NVIDIA GPU, and writes HDF5/XDMF and VTK snapshots.\n"
  "Example decks are in /usr/share/adi3d/inputs. The package also holds the batched\n"
  "tridiagonal solver library (libadi3d_tridiag, headers under /usr/include/adi3d, and\n"
  "find_package(adi3d) giving the CMake target adi3d::tridiag).\n"
  "${adi3d_cuda_note}")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The Debian dependencies from the ELF files (dpkg-shlibdeps): HDF5, VTK 9, Boost
# program_options, muparser, spdlog, fmt, LAPACK, libgomp, Open MPI. The CUDA libraries
# belong to no package: naming their folder as private makes dpkg-shlibdeps skip them
# instead of failing (they are a requirement stated in the description, not a Depends).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(ADI3D_CUDA)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
  if(ADI3D_NCCL)
    list(APPEND CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${adi3d_nccl_dir})
  endif()
endif()
# adi3d starts MPI even when run without mpirun (a singleton), and Open MPI then runs its
# orted, which is in openmpi-bin (with the help files of openmpi-common), not in libopenmpi3
# that dpkg-shlibdeps finds: on a fresh Debian 12 adi3d aborts in MPI_Init without it.
if(ADI3D_MPI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin")
endif()
# The development side (headers, CMake files) needs a compiler with OpenMP to use.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, g++")

include(CPack)
