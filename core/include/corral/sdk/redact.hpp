// Removes secret values (tokens, API keys, private keys) from text about to be shown: the
// host masks the secrets it knows of (secret options, sandbox secrets), a plugin those it
// found itself (a token from a kubeconfig, one a credential plugin printed), with this one
// class on both sides.
#pragma once

#include <string>
#include <vector>

namespace corral::sdk {

class Redactor {
 public:
  // Registers a secret; values shorter than 4 characters are ignored (too common to mask).
  void add(const std::string& secret);
  // Registers `pem` (a private key) whole and each line of its body, so a part of it
  // quoted on its own is masked too; its BEGIN and END lines are no secret.
  void add_pem(const std::string& pem);
  // `text` with every registered secret replaced by "***".
  std::string apply(std::string text) const;

 private:
  std::vector<std::string> secrets_;
};

}  // namespace corral::sdk
