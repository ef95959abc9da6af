#include "io/deck_schema.hpp"

namespace adi3d::io {

const std::vector<KeySpec>& deck_schema() {
  static const std::vector<KeySpec> keys = {
      {"problem.type", false, "heat", "heat (time stepping) or poisson (steady solve)"},
      {"grid.n", true, "", "nodes per axis: one value for a cube or three (nx ny nz), each >= 3"},
      {"grid.lo", false, "0 0 0", "lower corner of the box (one value or three)"},
      {"grid.hi", false, "1 1 1", "upper corner of the box (one value or three)"},
      {"material.diffusivity", false, "1",
       "a constant, three constants (x y z), 'formula <expr in x,y,z>' or 'hdf5 FILE:/DATASET'"},
      {"initial.u", false, "0", "initial field, formula in x,y,z"},
      {"source.f", false, "0", "source term, formula in x,y,z,t"},
      {"boundary.x-", false, "dirichlet 0", "dirichlet <formula> | neumann <formula> | robin <h> ; <u_inf> | periodic"},
      {"boundary.x+", false, "dirichlet 0", "as boundary.x-"},
      {"boundary.y-", false, "dirichlet 0", "as boundary.x-"},
      {"boundary.y+", false, "dirichlet 0", "as boundary.x-"},
      {"boundary.z-", false, "dirichlet 0", "as boundary.x-"},
      {"boundary.z+", false, "dirichlet 0", "as boundary.x-"},
      {"time.dt", false, "", "time step (> 0); required for problem.type = heat"},
      {"time.t_end", false, "", "final time (>= 0); required for problem.type = heat"},
      {"time.theta", false, "0.5", "implicit weight in [0.5, 1]: 0.5 second order, 1 damping"},
      {"solver.backend", false, "auto", "auto (GPU when present), cpu or cuda"},
      {"solver.precision", false, "double",
       "float, double or mixed (Poisson: float sweeps, double residual; reaches double's tolerances)"},
      {"solver.device", false, "0", "CUDA device index"},
      {"solver.tol", false, "1e-8 (double, mixed); float: from the grid, 1e-5 to 1e-3",
       "Poisson: relative residual to reach"},
      {"solver.max_iter", false, "1000", "Poisson: iteration limit (exit 1 when reached)"},
      {"solver.cycle", false, "0", "Poisson: ADI parameters per cycle (0 chooses from the spectrum)"},
      {"solver.method", false, "auto",
       "Poisson: auto (spectral where the problem separates, else adi, and krylov where adi diverges), adi (the "
       "ADI iteration), spectral "
       "(one direct solve: alpha constant per axis or of z alone, x and y faces alike, one rank) or krylov "
       "(conjugate gradients: alpha that varies inside planes)"},
      {"solver.preconditioner", false, "auto",
       "krylov: auto (spectral where it applies, else adi), spectral (direct solve of the plane-mean alpha; "
       "one rank) or adi (a cycle of ADI steps; any faces and ranks)"},
      {"output.dir", false, "output", "directory for results (created if absent)"},
      {"output.every", false, "0", "write a snapshot every N steps (0: only the final state)"},
      {"output.formats", false, "none", "any of: hdf5 vtk; or none"},
      {"output.interval", false, "0", "write a snapshot every T of simulated time (instead of output.every)"},
      {"output.precision", false, "same", "float (float32 fields, for large grids) or same (the run's)"},
      {"output.fields", false, "u error alpha", "any of: u error alpha (error needs check.exact, alpha a "
       "variable diffusivity); default: those available"},
      {"output.checkpoint_every", false, "0", "write OUTPUT_DIR/checkpoint.h5 every N steps (0: never)"},
      {"output.compression", false, "none",
       "HDF5 snapshot datasets: none, gzip[:LEVEL] (shuffle + deflate, level 1-9, default 1) or szip; "
       "lossless, chunked by planes, slower to write"},
      {"check.exact", false, "", "exact solution, formula in x,y,z,t: errors are reported"},
  };
  return keys;
}

const KeySpec* find_key(const std::string& key) {
  for (const KeySpec& spec : deck_schema())
    if (key == spec.key) return &spec;
  return nullptr;
}

}  // namespace adi3d::io
