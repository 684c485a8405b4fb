// What a lease folder records about itself in labels.json: the labels create received
// (get receives only an id, and list filters by labels). One line of JSON, so a listing
// of many leases is one line per lease; an object, so later versions can add fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <corral/types.hpp>

namespace corral_ssh {

struct LeaseRecord {
  corral::StringMap labels;
};

// The record as one line of JSON (no newline: values are escaped).
std::string to_line(const LeaseRecord& record);

// Reads a record written by to_line; throws invalid-argument for anything else.
LeaseRecord record_from(std::string_view text);

// The record in the output of remote_scripts' read_record: its last non-empty line, since
// a chatty login script (.bashrc) may print before it.
LeaseRecord record_from_output(std::string_view output);

struct ListedLease {
  std::string id;
  LeaseRecord record;
};

// The leases in the output of remote_scripts' list_leases ("<id>\t<record>" lines).
// Lines whose id is not a lease id or whose record does not parse are skipped: the root
// may hold folders that are not corral's.
std::vector<ListedLease> parse_listing(std::string_view output);

// True for an id this plugin may use as a folder name: 1-64 letters, digits, '-' or '_',
// not starting with '-'.
bool is_lease_id(std::string_view id);

}  // namespace corral_ssh
