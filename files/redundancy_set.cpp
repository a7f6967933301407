// RedundancySet: loading and judging the redundancy files of one data file.
#include "files/redundancy_set.h"

#include <fcntl.h>

namespace ecjit::files {

RedundancySet RedundancySet::load(std::function<std::string(unsigned)> path_of, const std::string &data_name,
                                  unsigned m_hint, bool writable) {
  RedundancySet set;
  set.path_of = std::move(path_of);
  unsigned m = m_hint;
  for (unsigned r = 0; r < m; ++r) {
    EccFile e;
    e.path = set.path_of(r);
    auto fd = open_file(e.path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW);
    if (!fd.ok()) {
      e.problem = fd.status().message();
      set.files.push_back(std::move(e));
      continue;
    }
    e.fd = std::move(*fd);
    std::vector<uint8_t> first(RedundancyHeader::kAlign);
    size_t got = 0;
    Status st = read_at(e.fd.get(), 0, first.size(), first.data(), &got, e.path);
    first.resize(got);
    auto read_more = [&](uint64_t off, uint64_t len, uint8_t *p) {
      size_t n = 0;
      ECJIT_RETURN_IF_ERROR(read_at(e.fd.get(), off, size_t(len), p, &n, e.path));
      if (n != len) return Status(StatusCode::kIoError, "torn header: the file ends inside it");
      return Status::Ok();
    };
    Result<RedundancyHeader> h = st.ok() ? RedundancyHeader::parse(first, read_more) : Result<RedundancyHeader>(st);
    if (!h.ok()) {
      e.problem = e.path + ": " + h.status().message();
    } else if (h->name != data_name || h->ecc_index != r) {
      e.problem = e.path + ": header belongs to another file ('" + h->name + "', redundancy file " +
                  std::to_string(h->ecc_index) + ")";
    } else {
      if (h->m > m && h->m <= 65536) m = h->m;
      e.header = std::move(*h);
    }
    set.files.push_back(std::move(e));
  }
  return set;
}

const RedundancyHeader *RedundancySet::newest() const {
  const RedundancyHeader *auth = nullptr;
  for (const EccFile &e : files)
    if (e.header && (!auth || e.header->created_ns > auth->created_ns)) auth = &*e.header;
  return auth;
}

void RedundancySet::align_to(const RedundancyHeader &auth) {
  files.resize(auth.m);
  for (unsigned r = 0; r < auth.m; ++r) {
    EccFile &e = files[r];
    if (e.path.empty()) {
      e.path = path_of(r);
      e.problem = e.path + ": does not exist";
    }
    const auto &h = e.header;
    if (h && (h->spec != auth.spec || h->unit != auth.unit || h->k != auth.k || h->m != auth.m ||
              h->data.size != auth.data.size)) {
      e.problem = e.path + ": written for other parameters or another version of the data";
      e.header.reset();
    }
  }
}

bool RedundancySet::serves(unsigned r, uint64_t s, const RedundancyHeader &auth) const {
  const auto &h = files[r].header;
  if (!h) return false;
  if (h->run_id == auth.run_id) return true;
  for (unsigned j = 0; j < auth.k; ++j)
    if (h->data_sig(s, j) != auth.data_sig(s, j)) return false;
  return true;
}

}  // namespace ecjit::files
