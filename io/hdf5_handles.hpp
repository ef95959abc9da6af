#pragma once
// RAII wrappers over the HDF5 C API (hid_t handles) and checked calls. Every failing call
// throws OutputError "<file>: <operation>: <HDF5's innermost reason>". HDF5's own error
// printing is switched off; all HDF5 use in adi3d is serialised by Hdf5Lock, so the
// writer thread and the main thread (restart, tests) never call into the library at once.
#include "io/output_compression.hpp"
#include "io/output_ranks.hpp"
#include "io/snapshot.hpp"

#include <hdf5.h>

#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace adi3d::io::h5 {

// Holds the process-wide HDF5 mutex and disables automatic error printing (per thread).
class Hdf5Lock {
 public:
  Hdf5Lock();

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

// For a forked child (hdf5_probe.hpp), a process of one thread whose parent held the lock
// across the fork: its Hdf5Locks lock nothing from here on (the copy of the mutex stays
// locked by a thread that does not exist in the child).
void forked_child_needs_no_lock();

// Throws OutputError for a negative HDF5 return value.
[[noreturn]] void fail(const std::string& file, const std::string& what);
inline herr_t check(herr_t status, const std::string& file, const std::string& what) {
  if (status < 0) fail(file, what);
  return status;
}

// An owned hid_t, closed with the function that matches its kind.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer, const std::string& file, const std::string& what);
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  void reset();
  // Closes now and reports a failed close (a file's close flushes its data).
  void close(const std::string& file, const std::string& what);

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Files shared by several ranks (ranks.shared()) are opened by all of them together
// through MPI-IO; every call on such a file that changes its structure (groups, datasets,
// attributes, links) is collective: each rank makes it, with the same arguments.
Handle create_file(const std::string& path, const OutputRanks& ranks = {});  // truncates
Handle open_file(const std::string& path, bool writable, const OutputRanks& ranks = {});
// Writes everything buffered to the disk (MPI_File_sync on a shared file): collective.
void flush_file(hid_t file, const std::string& path);
Handle open_group(hid_t parent, const std::string& name, const std::string& file);
Handle create_group(hid_t parent, const std::string& name, const std::string& file);
bool has_link(hid_t parent, const std::string& name, const std::string& file);

// 3D dataset shaped (nz, ny, nx) from x-fastest data, stored as field.single says (HDF5
// converts from the memory type only when the two differ), laid out as hdf5_layout.hpp says.
// The field holds this rank's planes (ranks.planes); on a shared file every rank writes its
// own into the one dataset, collectively.
void write_field(hid_t parent, const FieldBuffer& field, const Grid3& grid, const std::string& file,
                 const Compression& compression = {}, const OutputRanks& ranks = {});
// Reads a (nz, ny, nx) dataset into doubles or floats (converted by HDF5 when needed):
// the whole of it, or the z planes `planes` lists, in that order (a rank's slab with its
// ghost planes, which wrap around on a periodic z axis).
void read_field(hid_t parent, const std::string& name, const Grid3& grid, bool single,
                std::vector<float>* f32, std::vector<double>* f64, const std::string& file,
                const std::vector<int>* planes = nullptr);
// The element size (4 or 8) of a float dataset.
int dataset_float_size(hid_t parent, const std::string& name, const std::string& file);

void write_attr(hid_t obj, const std::string& name, double value, const std::string& file);
void write_attr(hid_t obj, const std::string& name, long value, const std::string& file);
void write_attr(hid_t obj, const std::string& name, const std::array<double, 3>& v, const std::string& file);
void write_attr(hid_t obj, const std::string& name, const std::array<long, 3>& v, const std::string& file);
void write_attr(hid_t obj, const std::string& name, const std::string& text, const std::string& file);
bool has_attr(hid_t obj, const std::string& name, const std::string& file);
double read_attr_double(hid_t obj, const std::string& name, const std::string& file);
long read_attr_long(hid_t obj, const std::string& name, const std::string& file);
std::array<double, 3> read_attr_double3(hid_t obj, const std::string& name, const std::string& file);
std::array<long, 3> read_attr_long3(hid_t obj, const std::string& name, const std::string& file);
std::string read_attr_string(hid_t obj, const std::string& name, const std::string& file);

// A scalar string dataset (no size limit, unlike attributes) and its reader.
void write_string_dataset(hid_t parent, const std::string& name, const std::string& text,
                          const std::string& file);
std::string read_string_dataset(hid_t parent, const std::string& name, const std::string& file);

// Names of the links in a group, in name order.
std::vector<std::string> link_names(hid_t group, const std::string& file);

// A link `name` in `parent` to the root group of another file (`target`, relative to the
// directory of the file that holds the link, or absolute).
void create_external_link(hid_t parent, const std::string& name, const std::string& target, const std::string& file);
// Whether `name` in `parent` is such a link.
bool is_external_link(hid_t parent, const std::string& name, const std::string& file);

}  // namespace adi3d::io::h5
