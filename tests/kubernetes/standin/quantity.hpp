// Resource quantities ("100m", "1.5", "2Gi", "1e3") as k8s.io/apimachinery/pkg/api/resource
// reads them, for the scheduler's arithmetic and the API server's validation.
#pragma once

#include <optional>
#include <string>

namespace corral::kubernetes::standin {

// The quantity's value in base units (cores, bytes), or nullopt when it is not one.
std::optional<double> parse_quantity(const std::string& text);

// The API server's message for a string that is not a quantity.
inline constexpr const char* kQuantityFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

}  // namespace corral::kubernetes::standin
