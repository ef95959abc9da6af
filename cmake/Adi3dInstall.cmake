# cmake --install BUILD --prefix PREFIX puts under PREFIX:
#   bin/adi3d
#   lib/libadi3d_solvers.so, libadi3d_bench.so, libadi3d_tridiag.so.*   (what adi3d loads)
#   include/adi3d/solvers/tridiag/{tridiag,tuning_file}.hpp            (the tridiag library)
#   lib/cmake/adi3d/adi3dConfig*.cmake, adi3dTargets*.cmake  (find_package(adi3d) -> adi3d::tridiag)
#   share/adi3d/inputs/*.ini                                           (the example decks)
#   share/doc/adi3d/README.md, docs/ (*.md, images, examples/)         (not docs/perf's measurements)
# Two components: tridiag (the library, its headers and CMake files:
# cmake --install BUILD --component tridiag) and adi3d (the rest); the .deb holds both.
# The static libraries (physics, io, app) are linked into adi3d and not installed. The RPATH
# (top-level CMakeLists.txt) finds the libraries beside bin/ and the CUDA runtime where the
# build found it.
include(CMakePackageConfigHelpers)

install(TARGETS adi3d RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT adi3d)
install(TARGETS adi3d_solvers adi3d_bench
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT adi3d)
install(TARGETS adi3d_tridiag EXPORT adi3dTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tridiag)
# The public headers: tridiag.hpp includes only standard headers; tuning_file.hpp includes
# tridiag.hpp by its project path, which stays valid under include/adi3d.
install(FILES ${PROJECT_SOURCE_DIR}/solvers/tridiag/tridiag.hpp
              ${PROJECT_SOURCE_DIR}/solvers/tridiag/tuning_file.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/adi3d/solvers/tridiag COMPONENT tridiag)

set(adi3d_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/adi3d)
install(EXPORT adi3dTargets NAMESPACE adi3d:: DESTINATION ${adi3d_cmake_dir} COMPONENT tridiag)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/adi3dConfig.cmake.in
  ${PROJECT_BINARY_DIR}/adi3dConfig.cmake INSTALL_DESTINATION ${adi3d_cmake_dir})
# 0.x: a minor release may change the library's interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/adi3dConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/adi3dConfig.cmake ${PROJECT_BINARY_DIR}/adi3dConfigVersion.cmake
        DESTINATION ${adi3d_cmake_dir} COMPONENT tridiag)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/adi3d/inputs
        COMPONENT adi3d FILES_MATCHING PATTERN "*.ini")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT adi3d)
# Beside the README as in the repository, so that its links to docs/ resolve. docs/perf
# (measurements: JSON, logs, plots) stays in the repository to keep the package small.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT adi3d
        FILES_MATCHING
          PATTERN "*.md" PATTERN "*.png" PATTERN "*.svg"
          PATTERN "*.cpp" PATTERN "CMakeLists.txt"
          PATTERN "perf" EXCLUDE)
