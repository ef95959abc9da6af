#include "io/hdf5_handles.hpp"

#include "io/hdf5_layout.hpp"

#include <fmt/format.h>

#include <new>

namespace adi3d::io::h5 {
namespace {

std::recursive_mutex& library_mutex() {
  static std::recursive_mutex m;
  return m;
}

herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
  return 0;
}

// HDF5 has no 'long' type id of its own: map to the native one of the right width.
hid_t native_long() { return sizeof(long) == 8 ? H5T_NATIVE_INT64 : H5T_NATIVE_INT32; }

Handle make_space(int rank, const hsize_t* dims, const std::string& file) {
  return Handle(rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr), H5Sclose,
                file, "create a dataspace");
}

Handle string_type(std::size_t size, const std::string& file) {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, file, "copy the string type");
  check(H5Tset_size(t, size == 0 ? 1 : size), file, "size the string type");
  check(H5Tset_strpad(t, H5T_STR_NULLPAD), file, "pad the string type");
  return t;
}

void write_attr_raw(hid_t obj, const std::string& name, hid_t type, int rank, const hsize_t* dims,
                    const void* data, const std::string& file) {
  const std::string what = "write attribute '" + name + "'";
  if (check(H5Aexists(obj, name.c_str()), file, what) > 0)
    check(H5Adelete(obj, name.c_str()), file, what);
  Handle space = make_space(rank, dims, file);
  Handle attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, file, what);
  check(H5Awrite(attr, type, data), file, what);
}

Handle open_attr(hid_t obj, const std::string& name, std::size_t expected, const std::string& file) {
  const std::string what = "read attribute '" + name + "'";
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, file, what);
  Handle space(H5Aget_space(attr), H5Sclose, file, what);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0 || static_cast<std::size_t>(n) != expected)
    throw OutputError(fmt::format("{}: attribute '{}' has {} values, expected {}", file, name, n, expected));
  return attr;
}

bool& in_forked_child() {
  static bool child = false;
  return child;
}

}  // namespace

void forked_child_needs_no_lock() { in_forked_child() = true; }

Hdf5Lock::Hdf5Lock() : lock_(library_mutex(), std::defer_lock) {
  if (!in_forked_child()) lock_.lock();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

void fail(const std::string& file, const std::string& what) {
  std::string reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &reason);
  H5Eclear2(H5E_DEFAULT);
  if (reason.size() > 240) reason = reason.substr(0, 240) + "...";
  throw OutputError(reason.empty() ? fmt::format("{}: cannot {}", file, what)
                                   : fmt::format("{}: cannot {} (HDF5: {})", file, what, reason));
}

Handle::Handle(hid_t id, Closer closer, const std::string& file, const std::string& what)
    : id_(id), closer_(closer) {
  if (id < 0) fail(file, what);
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && closer_) closer_(id_);
  id_ = -1;
}

void Handle::close(const std::string& file, const std::string& what) {
  const hid_t id = id_;
  id_ = -1;
  if (id >= 0 && closer_) check(closer_(id), file, what);
}

namespace {

// MPI-IO over the writers' communicator where several ranks share the file.
Handle file_access(const OutputRanks& ranks, const std::string& path) {
  const std::string what = "set the file access";
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path, what);
  if (!ranks.shared()) return fapl;
#ifdef H5_HAVE_PARALLEL
  const MPI_Comm comm = *static_cast<const MPI_Comm*>(ranks.comm->mpi_comm());
  check(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), path, "open the file through MPI-IO");
  // Metadata read by one rank and broadcast, and written collectively: without this every
  // rank reads the same small pieces of the file, and each writes them.
  check(H5Pset_all_coll_metadata_ops(fapl, true), path, what);
  check(H5Pset_coll_metadata_write(fapl, true), path, what);
#else
  throw OutputError(path + ": " + std::to_string(ranks.size()) +
                    " ranks write this file together, but this adi3d was built with serial HDF5");
#endif
  return fapl;
}

}  // namespace

Handle create_file(const std::string& path, const OutputRanks& ranks) {
  Handle fapl = file_access(ranks, path);
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose, path, "create the file");
}

Handle open_file(const std::string& path, bool writable, const OutputRanks& ranks) {
  Handle fapl = file_access(ranks, path);
  return Handle(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl), H5Fclose, path,
                writable ? "open the file for writing" : "open the file");
}

void flush_file(hid_t file, const std::string& path) {
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), path, "flush the file");
}

Handle open_group(hid_t parent, const std::string& name, const std::string& file) {
  return Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, file, "open group '" + name + "'");
}

Handle create_group(hid_t parent, const std::string& name, const std::string& file) {
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, file,
                "create group '" + name + "'");
}

bool has_link(hid_t parent, const std::string& name, const std::string& file) {
  return check(H5Lexists(parent, name.c_str(), H5P_DEFAULT), file, "look up '" + name + "'") > 0;
}

void write_field(hid_t parent, const FieldBuffer& field, const Grid3& grid, const std::string& file,
                 const Compression& compression, const OutputRanks& ranks) {
  const std::string what = "write dataset '" + field.name + "'";
  if (field.size() != ranks.values(grid))
    throw OutputError(fmt::format("{}: {}: {} values for {} planes of a grid of {}", file, what, field.size(),
                                  ranks.planes(grid), grid.size()));
  const hsize_t dims[3] = {static_cast<hsize_t>(grid.n[2]), static_cast<hsize_t>(grid.n[1]),
                           static_cast<hsize_t>(grid.n[0])};
  const hid_t stored = field.single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  const hid_t in_memory = field.data_single() ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  const std::size_t value_bytes = field.single ? sizeof(float) : sizeof(double);
  Handle space = make_space(3, dims, file);
  Handle dcpl = field_creation(grid, value_bytes, compression, file);
  Handle dapl = field_access(grid, value_bytes, file);
  Handle set(H5Dcreate2(parent, field.name.c_str(), stored, space, H5P_DEFAULT, dcpl, dapl), H5Dclose, file, what);
  // A shared file's filtered chunks need collective writes; a contiguous field's planes are
  // one region of the file per rank, which each writes on its own (independent MPI-IO: no
  // two-phase shuffle of the data between the ranks first).
  Handle dxpl = field_transfer(stored != in_memory, ranks.shared() && compression.on(), file);
  if (compression.on() && ranks.shared() && stored != in_memory) {
    // HDF5 converts types only in independent writes, and writes filters only in
    // collective ones: the ranks convert their planes first.
    if (!field.single) throw OutputError(file + ": " + what + ": float values stored as float64");
    const auto* values = static_cast<const double*>(field.data());
    const std::vector<float> converted(values, values + field.size());
    Handle plain = field_transfer(false, true, file);
    write_planes(set, stored, converted.data(), grid, ranks, plain, file, what);
  } else if (compression.on()) {
    write_planes(set, in_memory, field.data(), grid, ranks, dxpl, file, what);
  } else {
    write_contiguous(set, in_memory, field.data(), grid, value_bytes, dxpl, file, what, ranks);
  }
  set.close(file, what);
}

void read_field(hid_t parent, const std::string& name, const Grid3& grid, bool single,
                std::vector<float>* f32, std::vector<double>* f64, const std::string& file,
                const std::vector<int>* planes) {
  const std::string what = "read dataset '" + name + "'";
  Handle set(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, file, what);
  Handle space(H5Dget_space(set), H5Sclose, file, what);
  hsize_t dims[3] = {0, 0, 0};
  if (H5Sget_simple_extent_ndims(space) != 3 || H5Sget_simple_extent_dims(space, dims, nullptr) != 3 ||
      dims[0] != static_cast<hsize_t>(grid.n[2]) || dims[1] != static_cast<hsize_t>(grid.n[1]) ||
      dims[2] != static_cast<hsize_t>(grid.n[0]))
    throw OutputError(fmt::format("{}: dataset '{}' is not shaped ({}, {}, {})", file, name, grid.n[2],
                                  grid.n[1], grid.n[0]));
  const std::size_t plane = static_cast<std::size_t>(grid.n[0]) * grid.n[1];
  const std::size_t count = planes ? planes->size() * plane : grid.size();
  try {  // a damaged file's shape may ask for more than any machine has
    if (single)
      f32->resize(count);
    else
      f64->resize(count);
  } catch (const std::bad_alloc&) {
    throw OutputError(fmt::format("{}: dataset '{}' of {} x {} x {} values needs more memory than this machine "
                                  "gives", file, name, grid.n[0], grid.n[1], grid.n[2]));
  }
  const hid_t type = single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  char* out = single ? reinterpret_cast<char*>(f32->data()) : reinterpret_cast<char*>(f64->data());
  if (!planes) {
    check(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), file, what);
    return;
  }
  // Each run of consecutive planes is one read.
  const std::size_t value_bytes = single ? sizeof(float) : sizeof(double);
  for (std::size_t at = 0; at < planes->size();) {
    std::size_t run = 1;
    while (at + run < planes->size() && (*planes)[at + run] == (*planes)[at] + static_cast<int>(run)) ++run;
    const int first = (*planes)[at];
    if (first < 0 || first + static_cast<int>(run) > grid.n[2])
      throw OutputError(fmt::format("{}: planes {}..{} of dataset '{}' lie outside its {} planes", file, first,
                                    first + static_cast<int>(run) - 1, name, grid.n[2]));
    const hsize_t start[3] = {static_cast<hsize_t>(first), 0, 0};
    const hsize_t shape[3] = {run, dims[1], dims[2]};
    check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, shape, nullptr), file, what);
    Handle memory(H5Screate_simple(3, shape, nullptr), H5Sclose, file, what);
    check(H5Dread(set, type, memory, space, H5P_DEFAULT, out + at * plane * value_bytes), file, what);
    at += run;
  }
}

int dataset_float_size(hid_t parent, const std::string& name, const std::string& file) {
  const std::string what = "inspect dataset '" + name + "'";
  Handle set(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, file, what);
  Handle type(H5Dget_type(set), H5Tclose, file, what);
  if (H5Tget_class(type) != H5T_FLOAT) throw OutputError(file + ": dataset '" + name + "' is not floating point");
  return static_cast<int>(H5Tget_size(type));
}

void write_attr(hid_t obj, const std::string& name, double value, const std::string& file) {
  write_attr_raw(obj, name, H5T_NATIVE_DOUBLE, 0, nullptr, &value, file);
}
void write_attr(hid_t obj, const std::string& name, long value, const std::string& file) {
  write_attr_raw(obj, name, native_long(), 0, nullptr, &value, file);
}
void write_attr(hid_t obj, const std::string& name, const std::array<double, 3>& v, const std::string& file) {
  const hsize_t three = 3;
  write_attr_raw(obj, name, H5T_NATIVE_DOUBLE, 1, &three, v.data(), file);
}
void write_attr(hid_t obj, const std::string& name, const std::array<long, 3>& v, const std::string& file) {
  const hsize_t three = 3;
  write_attr_raw(obj, name, native_long(), 1, &three, v.data(), file);
}
void write_attr(hid_t obj, const std::string& name, const std::string& text, const std::string& file) {
  Handle type = string_type(text.size(), file);
  const std::string padded = text.empty() ? std::string(1, '\0') : text;
  write_attr_raw(obj, name, type, 0, nullptr, padded.data(), file);
}

bool has_attr(hid_t obj, const std::string& name, const std::string& file) {
  return check(H5Aexists(obj, name.c_str()), file, "look up attribute '" + name + "'") > 0;
}

double read_attr_double(hid_t obj, const std::string& name, const std::string& file) {
  Handle attr = open_attr(obj, name, 1, file);
  double v = 0;
  check(H5Aread(attr, H5T_NATIVE_DOUBLE, &v), file, "read attribute '" + name + "'");
  return v;
}
long read_attr_long(hid_t obj, const std::string& name, const std::string& file) {
  Handle attr = open_attr(obj, name, 1, file);
  long v = 0;
  check(H5Aread(attr, native_long(), &v), file, "read attribute '" + name + "'");
  return v;
}
std::array<double, 3> read_attr_double3(hid_t obj, const std::string& name, const std::string& file) {
  Handle attr = open_attr(obj, name, 3, file);
  std::array<double, 3> v{};
  check(H5Aread(attr, H5T_NATIVE_DOUBLE, v.data()), file, "read attribute '" + name + "'");
  return v;
}
std::array<long, 3> read_attr_long3(hid_t obj, const std::string& name, const std::string& file) {
  Handle attr = open_attr(obj, name, 3, file);
  std::array<long, 3> v{};
  check(H5Aread(attr, native_long(), v.data()), file, "read attribute '" + name + "'");
  return v;
}
std::string read_attr_string(hid_t obj, const std::string& name, const std::string& file) {
  const std::string what = "read attribute '" + name + "'";
  Handle attr = open_attr(obj, name, 1, file);
  Handle type(H5Aget_type(attr), H5Tclose, file, what);
  if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) > 0)
    throw OutputError(file + ": attribute '" + name + "' is not a fixed-length string");
  std::string text(H5Tget_size(type), '\0');
  check(H5Aread(attr, type, text.data()), file, what);
  return text.substr(0, text.find('\0'));
}

void write_string_dataset(hid_t parent, const std::string& name, const std::string& text,
                          const std::string& file) {
  const std::string what = "write dataset '" + name + "'";
  Handle type = string_type(text.size(), file);
  Handle space = make_space(0, nullptr, file);
  Handle set(H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
             file, what);
  const std::string padded = text.empty() ? std::string(1, '\0') : text;
  check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()), file, what);
}

std::string read_string_dataset(hid_t parent, const std::string& name, const std::string& file) {
  const std::string what = "read dataset '" + name + "'";
  Handle set(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, file, what);
  Handle type(H5Dget_type(set), H5Tclose, file, what);
  if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) > 0)
    throw OutputError(file + ": dataset '" + name + "' is not a fixed-length string");
  std::string text(H5Tget_size(type), '\0');
  check(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), file, what);
  return text.substr(0, text.find('\0'));
}

std::vector<std::string> link_names(hid_t group, const std::string& file) {
  H5G_info_t info;
  check(H5Gget_info(group, &info), file, "list a group");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) fail(file, "list a group");
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    check(static_cast<herr_t>(H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                                                 name.size(), H5P_DEFAULT) < 0 ? -1 : 0),
          file, "list a group");
    name.resize(static_cast<std::size_t>(len));
    names.push_back(name);
  }
  return names;
}

void create_external_link(hid_t parent, const std::string& name, const std::string& target, const std::string& file) {
  check(H5Lcreate_external(target.c_str(), "/", parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT), file,
        "link '" + name + "' to " + target);
}

bool is_external_link(hid_t parent, const std::string& name, const std::string& file) {
  H5L_info_t info;  // H5Lget_info's own in HDF5 1.10 (Debian 12) and later
  check(H5Lget_info(parent, name.c_str(), &info, H5P_DEFAULT), file, "look up link '" + name + "'");
  return info.type == H5L_TYPE_EXTERNAL;
}

}  // namespace adi3d::io::h5
