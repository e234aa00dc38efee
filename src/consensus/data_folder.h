// The member's data folder, created so that a power cut cannot take it back.
#pragma once

#include <string>

#include "base/result.h"

namespace rw::consensus {

// Creates `folder` and any missing parent, and makes each new entry durable
// by fsyncing the folder that holds it. libraft fsyncs its files and the data
// folder itself, never the folder's parent: without this, a power cut soon
// after a member's first start may undo the folder's creation and with it the
// member's term, vote and log (docs/RELIABILITY.md "Power loss and slow
// disks"). An existing folder is left as it is. The error names the call and
// the path.
[[nodiscard]] Result<void, std::string> create_data_folder(const std::string& folder);

}  // namespace rw::consensus
