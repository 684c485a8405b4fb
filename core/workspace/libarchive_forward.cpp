// libarchive, loaded when corral first packs or unpacks. Linked, it would be loaded at
// every start of corral with libxml2, ICU, lzma, zstd, lz4 and bzip2 behind it: a
// millisecond and a half that `corral list` or `corral version` never use, and that a
// run pays on its pack thread instead. Each libarchive function the host calls is
// defined here, where <archive.h>'s declarations hold it to the library's signature, and
// forwards to the library's own, looked up on its first call. A function this list
// lacks fails the link, not a run.
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>

#include <string>

#include "corral/errors.hpp"

namespace corral {
namespace {

// The library, opened once; throws unavailable (and tries again next time) when it cannot be.
void* libarchive() {
  static void* const handle = [] {
    void* h = ::dlopen(CORRAL_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
      throw Error(ErrorCode::unavailable, std::string("cannot load libarchive: ") + ::dlerror(),
                  "install it (Debian: apt-get install libarchive13), or reinstall corral");
    return h;
  }();
  return handle;
}

// libarchive's own `name`, of type Fn.
template <typename Fn>
Fn real(const char* name) {
  void* symbol = ::dlsym(libarchive(), name);
  if (!symbol)
    throw Error(ErrorCode::unavailable, std::string("libarchive (" CORRAL_LIBARCHIVE_SONAME ") has no ") + name,
                "install libarchive 3.6 or later");
  return reinterpret_cast<Fn>(symbol);
}

}  // namespace
}  // namespace corral

#define CORRAL_FORWARD(result, name, params, args)                              \
  extern "C" result name params {                                               \
    static const auto forward = corral::real<result(*) params>(#name);          \
    return forward args;                                                        \
  }

CORRAL_FORWARD(struct archive_entry*, archive_entry_clear, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(void, archive_entry_free, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(const char*, archive_entry_hardlink, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(time_t, archive_entry_mtime, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(int, archive_entry_mtime_is_set, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(long, archive_entry_mtime_nsec, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(struct archive_entry*, archive_entry_new, (), ())
CORRAL_FORWARD(const char*, archive_entry_pathname, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(__LA_MODE_T, archive_entry_perm, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(void, archive_entry_set_filetype, (struct archive_entry *p0, unsigned int p1), (p0, p1))
CORRAL_FORWARD(void, archive_entry_set_mtime, (struct archive_entry *p0, time_t p1, long p2), (p0, p1, p2))
CORRAL_FORWARD(void, archive_entry_set_pathname, (struct archive_entry *p0, const char *p1), (p0, p1))
CORRAL_FORWARD(void, archive_entry_set_perm, (struct archive_entry *p0, __LA_MODE_T p1), (p0, p1))
CORRAL_FORWARD(void, archive_entry_set_size, (struct archive_entry *p0, la_int64_t p1), (p0, p1))
CORRAL_FORWARD(void, archive_entry_set_symlink, (struct archive_entry *p0, const char *p1), (p0, p1))
CORRAL_FORWARD(la_int64_t, archive_entry_size, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(int, archive_entry_size_is_set, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(const char*, archive_entry_symlink, (struct archive_entry *p0), (p0))
CORRAL_FORWARD(int, archive_errno, (struct archive *p0), (p0))
CORRAL_FORWARD(const char*, archive_error_string, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_read_data_block, (struct archive *p0, const void **p1, size_t *p2, la_int64_t *p3),
               (p0, p1, p2, p3))
CORRAL_FORWARD(int, archive_read_free, (struct archive *p0), (p0))
CORRAL_FORWARD(struct archive*, archive_read_new, (), ())
CORRAL_FORWARD(int, archive_read_next_header, (struct archive *p0, struct archive_entry **p1), (p0, p1))
CORRAL_FORWARD(int, archive_read_open_filename, (struct archive *p0, const char *p1, size_t p2), (p0, p1, p2))
CORRAL_FORWARD(int, archive_read_support_filter_gzip, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_read_support_format_gnutar, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_read_support_format_tar, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_write_add_filter_gzip, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_write_close, (struct archive *p0), (p0))
CORRAL_FORWARD(la_ssize_t, archive_write_data, (struct archive *p0, const void *p1, size_t p2), (p0, p1, p2))
CORRAL_FORWARD(int, archive_write_free, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_write_header, (struct archive *p0, struct archive_entry *p1), (p0, p1))
CORRAL_FORWARD(struct archive*, archive_write_new, (), ())
CORRAL_FORWARD(int, archive_write_open2,
               (struct archive *p0, void *p1, archive_open_callback *p2, archive_write_callback *p3,
                archive_close_callback *p4, archive_free_callback *p5),
               (p0, p1, p2, p3, p4, p5))
CORRAL_FORWARD(int, archive_write_open_filename, (struct archive *p0, const char *p1), (p0, p1))
CORRAL_FORWARD(int, archive_write_set_bytes_per_block, (struct archive *p0, int p1), (p0, p1))
CORRAL_FORWARD(int, archive_write_set_filter_option,
               (struct archive *p0, const char *p1, const char *p2, const char *p3), (p0, p1, p2, p3))
CORRAL_FORWARD(int, archive_write_set_format_pax_restricted, (struct archive *p0), (p0))
CORRAL_FORWARD(int, archive_write_set_format_raw, (struct archive *p0), (p0))
