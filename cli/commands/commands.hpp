// The rows of the command table, one per file in this folder.
#pragma once

#include <string>

#include "command.hpp"

namespace corral::cli {

extern const Command kRun;
extern const Command kShell;
extern const Command kWarmup;
extern const Command kList;
extern const Command kStatus;
extern const Command kStop;
extern const Command kUrl;
extern const Command kExtend;
extern const Command kPause;
extern const Command kResume;
extern const Command kFork;
extern const Command kPool;
extern const Command kPoolFill;
extern const Command kPoolStatus;
extern const Command kPoolDrain;
extern const Command kDoctor;
extern const Command kConformance;
extern const Command kProviders;
extern const Command kDescribe;
extern const Command kDocs;
extern const Command kDocsMatrix;
extern const Command kDocsProvider;
extern const Command kDocsAll;
extern const Command kCompletion;
extern const Command kVersion;
extern const Command kComplete;
extern const Command kRefill;
extern const Command kMcp;
extern const Command kUsage;

// What `corral version` and `corral --version` print: "corral X.Y.Z (plugin ABI N)".
std::string version_line();
// corral's version alone ("X.Y.Z").
std::string version_number();

}  // namespace corral::cli
