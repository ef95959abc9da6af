// Event-timed runs of the CUDA backend's operations (see gpu_bench.hpp).
#include "solvers/bench/adi_bench.hpp"
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/bench/gpu_bench.hpp"
#include "solvers/diffusion.hpp"
#include "solvers/douglas_step.hpp"

#include <algorithm>
#include <functional>
#include <random>

namespace adi3d::cuda {
template <class T>
std::vector<OpTiming> time_backend_ops(int n, int repetitions) {
  CudaBackend<T> backend(0);
  cudaStream_t stream = backend.stream();
  Diffusion<T> d;
  for (int a = 0; a < 3; ++a) {
    d.grid.n[a] = n;
    d.grid.h[a] = 1.0 / (n - 1);
  }
  const std::size_t points = d.grid.size();
  const double field_bytes = static_cast<double>(points) * sizeof(T);
  std::vector<T> host(points);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  for (T& v : host) v = static_cast<T>(dist(rng));
  Array<T> u = backend.allocate(points), r = backend.allocate(points), copy = backend.allocate(points);
  backend.upload(host.data(), u.data(), points);
  backend.upload(host.data(), r.data(), points);
  const OperatorView<T> op = make_operator_view(d, nullptr);
  const T tau = static_cast<T>(0.5 * d.grid.h[0]);
  std::vector<OpTiming> out;

  out.push_back({"copy", "cudaMemcpyAsync D2D", median_ms(backend, 2, repetitions, [&] {
                   ADI3D_CUDA_CHECK(cudaMemcpyAsync(copy.data(), u.data(), points * sizeof(T),
                                                    cudaMemcpyDeviceToDevice, stream));
                 }),
                 2 * field_bytes});

  for (StencilVariant v : kStencilVariants) {
    CudaPolicy p = backend.policy();
    p.stencil = v;
    backend.set_policy(p);
    const double ms = median_ms(backend, 2, repetitions, [&] {
      backend.operator_rhs(op, u.data(), nullptr, FaceData<T>{}, T(1), r.data());
    });
    out.push_back({"stencil", to_string(backend.last_stencil()), ms, 2 * field_bytes});
  }
  backend.set_policy(CudaPolicy{});

  // Solves run in place on r; values stay bounded because (I - tau A)^{-1} is a contraction.
  for (XSolveVariant v :
       {XSolveVariant::pcr_thomas, XSolveVariant::thread_thomas, XSolveVariant::tridiag, XSolveVariant::warp_lines}) {
    CudaPolicy p{};
    p.x_solve = v;
    p.constant_coefficients = false;
    backend.set_policy(p);
    const double ms = median_ms(backend, 2, repetitions, [&] { backend.solve_lines(op, 0, tau, r.data()); });
    out.push_back({"solve_x", to_string(backend.last_x_solve()), ms, 2 * field_bytes});
  }
  // y and z: the tile kernels (default where they apply), then per-thread Thomas.
  enum class YZ { tiles, shared_factors, generated_rows };
  for (int axis = 1; axis < 3; ++axis) {
    for (YZ v : {YZ::tiles, YZ::shared_factors, YZ::generated_rows}) {
      CudaPolicy p{};
      p.yz_tiles = v == YZ::tiles;
      p.constant_coefficients = v != YZ::generated_rows;
      backend.set_policy(p);
      out.push_back({axis == 1 ? "solve_y" : "solve_z",
                     v == YZ::tiles            ? "tiles, warp per line"
                     : v == YZ::shared_factors ? "thomas, shared factors"
                                               : "thomas, generated rows",
                     median_ms(backend, 2, repetitions, [&] { backend.solve_lines(op, axis, tau, r.data()); }),
                     2 * field_bytes});
    }
  }
  backend.set_policy(CudaPolicy{});

  // Unfused step, operation by operation as DouglasStepper runs it where the fused path
  // does not apply: rhs (2 arrays), three in-place solves (2 each), update (3).
  const T dt = 2 * tau;
  out.push_back({"douglas_step", "unfused (rhs, 3 solves, axpy)", median_ms(backend, 2, repetitions, [&] {
                   backend.operator_rhs(op, u.data(), nullptr, FaceData<T>{}, dt, r.data());
                   for (int axis = 0; axis < 3; ++axis) backend.solve_lines(op, axis, tau, r.data());
                   backend.axpy(T(1), r.data(), u.data(), points);
                 }),
                 11 * field_bytes});

  // Fused step through DouglasStepper (constant alpha, fixed Dirichlet faces, no source):
  // rhs inside the x solve, update inside the z solve, 7 arrays (fused_step.cu); then,
  // where it applies, with the x and y passes in one kernel (CudaPolicy::fused_xy: d
  // between them through L2, 5 arrays from DRAM where the y role keeps up).
  ZeroForcing<T> forcing;
  DouglasStepper<T> stepper(backend, d, forcing, 0.5);
  double t = 0;
  for (bool merge : {false, true}) {
    CudaPolicy p{};
    p.fused_xy = merge;
    backend.set_policy(p);
    const bool fused = backend.fused_douglas_step(op, u.data(), nullptr, dt, tau, r.data());
    if (merge && !backend.last_fused_xy()) break;  // the merged kernel does not apply here
    out.push_back({"douglas_step",
                   !fused  ? "fused n/a: unfused"
                   : merge ? "fused, x and y in one kernel (rhs+x+y, z+update)"
                           : "fused (rhs+x, y, z+update)",
                   median_ms(backend, 2, repetitions, [&] {
                     stepper.step(u.data(), t, dt);
                     t += dt;
                   }),
                   (fused ? 7 : 11) * field_bytes});  // the merged kernel against the same floor
  }
  backend.set_policy(CudaPolicy{});
  // With a source (random, non-zero): the x pass reads f beside u, 8 arrays.
  {
    Array<T> f = backend.allocate(points);
    backend.upload(host.data(), f.data(), points);
    bool fused = true;
    const double ms = median_ms(backend, 2, repetitions, [&] {
      fused = backend.fused_douglas_step(op, u.data(), f.data(), dt, tau, r.data()) && fused;
    });
    if (fused) out.push_back({"douglas_step", "fused with a source f (rhs+f+x, y, z+update)", ms, 8 * field_bytes});
  }
  // Insulated (zero-flux Neumann) faces all round: the fused passes mirror u across them
  // and solve their nodes too, 7 arrays; where the fused step does not take them, the
  // unfused step, 11.
  {
    Diffusion<T> insulated = d;
    for (BoundaryKind& face : insulated.bc.face) face = BoundaryKind::neumann;
    const OperatorView<T> nop = make_operator_view(insulated, nullptr);
    bool fused = true;
    const double ms = median_ms(backend, 2, repetitions, [&] {
      if (backend.fused_douglas_step(nop, u.data(), nullptr, dt, tau, r.data())) return;
      fused = false;
      backend.operator_rhs(nop, u.data(), nullptr, FaceData<T>{}, dt, r.data());
      for (int axis = 0; axis < 3; ++axis) backend.solve_lines(nop, axis, tau, r.data());
      backend.axpy(T(1), r.data(), u.data(), points);
    });
    out.push_back({"douglas_step",
                   fused ? "fused, insulated faces (rhs+x, y, z+update)" : "insulated faces, unfused (rhs, 3 solves, axpy)",
                   ms, (fused ? 7 : 11) * field_bytes});
  }

  // Periodic faces all round: every line cyclic (Sherman-Morrison). Each solve by a warp per
  // line (default) and by the path it took before, the tridiag library's cyclic solver over
  // coefficient arrays for x and per-thread Thomas on shared factors for y and z; then the
  // step unfused (11 arrays) by each (the earlier paths: x by tridiag, y and z by Thomas),
  // and fused (7).
  {
    Diffusion<T> periodic = d;
    for (BoundaryKind& face : periodic.bc.face) face = BoundaryKind::periodic;
    const OperatorView<T> pop = make_operator_view(periodic, nullptr);
    CudaPolicy earlier{};
    earlier.x_solve = XSolveVariant::tridiag;
    earlier.yz_tiles = false;
    for (int axis = 0; axis < 3; ++axis)
      for (const CudaPolicy& p : {CudaPolicy{}, earlier}) {
        backend.set_policy(p);
        const double ms = median_ms(backend, 2, repetitions, [&] { backend.solve_lines(pop, axis, tau, r.data()); });
        const std::string by = axis == 0                  ? to_string(backend.last_x_solve())
                               : backend.last_yz_by_warp() ? "tiles, warp per line"
                                                           : "thomas, shared factors";
        out.push_back({axis == 0 ? "solve_x_periodic" : axis == 1 ? "solve_y_periodic" : "solve_z_periodic",
                       by + ", cyclic", ms, 2 * field_bytes});
      }
    for (const CudaPolicy& p : {CudaPolicy{}, earlier}) {
      backend.set_policy(p);
      const double ms = median_ms(backend, 2, repetitions, [&] {
        backend.operator_rhs(pop, u.data(), nullptr, FaceData<T>{}, dt, r.data());
        for (int axis = 0; axis < 3; ++axis) backend.solve_lines(pop, axis, tau, r.data());
        backend.axpy(T(1), r.data(), u.data(), points);
      });
      out.push_back({"douglas_step",
                     backend.last_yz_by_warp() ? "periodic faces, unfused, lines by a warp per line"
                                               : "periodic faces, unfused, x by tridiag, y and z by thomas",
                     ms, 11 * field_bytes});
    }
    backend.set_policy(CudaPolicy{});
    // Fused (the default where it applies): the x pass wraps the stencil, every pass
    // corrects its cyclic lines; 7 arrays.
    bool fused = true;
    const double ms = median_ms(backend, 2, repetitions, [&] {
      fused = backend.fused_douglas_step(pop, u.data(), nullptr, dt, tau, r.data()) && fused;
    });
    if (fused) out.push_back({"douglas_step", "fused, periodic faces (rhs+x, y, z+update)", ms, 7 * field_bytes});
  }

  // Variable alpha (random node field in [0.5, 1.5]): every pass reads alpha too. Unfused:
  // rhs 3 arrays, three solves 3 each, update 3; fused: rhs and x solve apart, y and z
  // fused with the update, 13 (fused_step_var.cu).
  Array<T> alpha = backend.allocate(points);
  backend.upload(host.data(), alpha.data(), points);
  const OperatorView<T> vop = make_operator_view(d, alpha.data());
  // The default operations with it, labelled by the variants that ran (the planes stencil
  // and warp_lines x solve take constant alpha only): 3 arrays each (alpha besides the
  // data in and out).
  const double stencil_ms = median_ms(backend, 2, repetitions, [&] {
    backend.operator_rhs(vop, u.data(), nullptr, FaceData<T>{}, T(1), r.data());
  });
  out.push_back({"stencil_var", to_string(backend.last_stencil()), stencil_ms, 3 * field_bytes});
  const double x_ms = median_ms(backend, 2, repetitions, [&] { backend.solve_lines(vop, 0, tau, r.data()); });
  out.push_back({"solve_x_var", to_string(backend.last_x_solve()), x_ms, 3 * field_bytes});
  // y and z: the tile kernels with an alpha tile (default), then per-thread Thomas.
  for (int axis = 1; axis < 3; ++axis)
    for (bool tiles : {true, false}) {
      CudaPolicy p{};
      p.yz_tiles = tiles;
      backend.set_policy(p);
      out.push_back({axis == 1 ? "solve_y_var" : "solve_z_var",
                     tiles ? "tiles, warp per line" : "thomas, generated rows",
                     median_ms(backend, 2, repetitions, [&] { backend.solve_lines(vop, axis, tau, r.data()); }),
                     3 * field_bytes});
    }
  backend.set_policy(CudaPolicy{});
  out.push_back({"douglas_step_var", "unfused (rhs, 3 solves, axpy)", median_ms(backend, 2, repetitions, [&] {
                   backend.operator_rhs(vop, u.data(), nullptr, FaceData<T>{}, dt, r.data());
                   for (int axis = 0; axis < 3; ++axis) backend.solve_lines(vop, axis, tau, r.data());
                   backend.axpy(T(1), r.data(), u.data(), points);
                 }),
                 15 * field_bytes});
  // The fused step on o, its x pass as one kernel where it applies, then as the stencil
  // and the x solve apart, labelled by what ran ("fused" + by + the passes) with its bytes
  // (one_kernel, apart); where the fused step does not apply, the unfused step under
  // unfused_label, or nothing (null).
  auto time_fused_variable = [&](const OperatorView<T>& o, const std::string& by, double one_kernel, double apart,
                                 const char* unfused_label) {
    for (bool one_kernel_x : {true, false}) {
      CudaPolicy p{};
      p.variable_x_pass = one_kernel_x;
      backend.set_policy(p);
      const bool fused_var = backend.fused_douglas_step(o, u.data(), nullptr, dt, tau, r.data());
      if (!fused_var && !unfused_label) break;
      const bool merged = fused_var && backend.last_variable_x_pass();
      const double ms = median_ms(backend, 2, repetitions, [&] {
        if (!backend.fused_douglas_step(o, u.data(), nullptr, dt, tau, r.data())) {
          backend.operator_rhs(o, u.data(), nullptr, FaceData<T>{}, dt, r.data());
          for (int axis = 0; axis < 3; ++axis) backend.solve_lines(o, axis, tau, r.data());
          backend.axpy(T(1), r.data(), u.data(), points);
        }
      });
      out.push_back({"douglas_step_var",
                     !fused_var ? std::string(unfused_label)
                                : "fused" + by + (merged ? " (rhs+x, y, z+update)" : " (rhs, x, y, z+update)"),
                     ms, !fused_var ? 15 * field_bytes : merged ? one_kernel : apart});
      if (!merged) break;
    }
    backend.set_policy(CudaPolicy{});
  };
  // Arrays: 10 with the x pass as one kernel (alpha in each pass), 13 apart.
  time_fused_variable(vop, "", 10 * field_bytes, 13 * field_bytes, "fused n/a: unfused");
  // o with insulated (zero-flux Neumann) faces all round: the fused passes mirror the
  // ghosts and solve the faces' nodes too, at the same arrays.
  auto insulated = [](OperatorView<T> o) {
    for (int axis = 0; axis < 3; ++axis) o.lo[axis] = o.hi[axis] = BoundaryKind::neumann;
    return o;
  };
  time_fused_variable(insulated(vop), ", insulated faces", 10 * field_bytes, 13 * field_bytes,
                      "insulated faces, unfused (rhs, 3 solves, axpy)");
  // o with convective (Robin) faces all round, one h each: the passes' end rows add their
  // tau h / h_grid, at the same arrays (the flux from u enters the source: not timed here).
  auto convective = [&](OperatorView<T> o) {
    o = insulated(o);
    for (int face = 0; face < 6; ++face) o.robin_h[face] = T(2);
    return o;
  };
  time_fused_variable(convective(vop), ", convective faces", 10 * field_bytes, 13 * field_bytes,
                      "convective faces, unfused (rhs, 3 solves, axpy)");

  // The same field binned into 4 materials, through its material index (what
  // DouglasStepper keeps for a field of few values): a byte per node in place of alpha.
  // The stencil and x solve: 2 arrays and the bytes; the fused step, whose x pass forms the
  // rhs itself (fused_step_var_x_kernel.cuh): 7 arrays and 3 bytes.
  std::vector<T> binned(points);
  for (std::size_t p = 0; p < points; ++p) binned[p] = T(0.5) + T(0.25) * std::min(3, static_cast<int>((host[p] - T(0.5)) * 4));
  backend.upload(binned.data(), alpha.data(), points);
  const MaterialArrays<T> materials = upload_materials(backend, index_materials(binned, {n, n, n}));
  OperatorView<T> mop = vop;
  materials.attach(mop);
  const double index_bytes = static_cast<double>(points);
  const double index_stencil_ms = median_ms(backend, 2, repetitions, [&] {
    backend.operator_rhs(mop, u.data(), nullptr, FaceData<T>{}, T(1), r.data());
  });
  out.push_back({"stencil_var", std::string(to_string(backend.last_stencil())) + ", material index",
                 index_stencil_ms, 2 * field_bytes + index_bytes});
  const double index_x_ms = median_ms(backend, 2, repetitions, [&] { backend.solve_lines(mop, 0, tau, r.data()); });
  out.push_back({"solve_x_var", std::string(to_string(backend.last_x_solve())) + ", material index", index_x_ms,
                 2 * field_bytes + index_bytes});
  // The step (7 arrays and 3 bytes), then with its x pass as the stencil and the x solve
  // apart (9 arrays and 4 bytes).
  time_fused_variable(mop, ", material index", 7 * field_bytes + 3 * index_bytes, 9 * field_bytes + 4 * index_bytes,
                      nullptr);
  time_fused_variable(insulated(mop), ", material index, insulated faces", 7 * field_bytes + 3 * index_bytes,
                      9 * field_bytes + 4 * index_bytes, "material index, insulated faces, unfused (rhs, 3 solves, axpy)");
  time_fused_variable(convective(mop), ", material index, convective faces", 7 * field_bytes + 3 * index_bytes,
                      9 * field_bytes + 4 * index_bytes, "material index, convective faces, unfused (rhs, 3 solves, axpy)");
  return out;
}

template std::vector<OpTiming> time_backend_ops<float>(int, int);
template std::vector<OpTiming> time_backend_ops<double>(int, int);

}  // namespace adi3d::cuda
