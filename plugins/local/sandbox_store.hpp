// Local sandboxes on disk: one folder per sandbox under the state dir, holding its
// metadata and the workspace the jail binds.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "corral/types.hpp"

namespace corral::local {

struct LocalSandbox {
  std::string id;
  std::string slug;
  std::string created_at;
  StringMap labels;
};

class SandboxStore {
 public:
  explicit SandboxStore(std::filesystem::path root) : root_(std::move(root)) {}
  const std::filesystem::path& root() const { return root_; }
  // Creates a new sandbox folder and its metadata; returns it with a fresh id.
  LocalSandbox create(const std::string& slug, const StringMap& labels) const;
  // The sandbox with `id`, or nullopt when its folder or metadata is gone.
  std::optional<LocalSandbox> find(const std::string& id) const;
  std::vector<LocalSandbox> all() const;
  // Removes the sandbox's folder, including files the command made read-only.
  void remove(const std::string& id) const;
  std::filesystem::path dir_of(const std::string& id) const;
  std::filesystem::path workspace_of(const std::string& id) const { return dir_of(id) / "workspace"; }
  // Unpacks the .tar.gz at `archive` over the workspace (the archive's files win).
  void unpack(const std::string& id, const std::filesystem::path& archive) const;

 private:
  std::filesystem::path root_;
};

}  // namespace corral::local
