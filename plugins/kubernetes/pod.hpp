// A sandbox is a Pod: the manifest corral creates (its image kept alive by a shell that
// waits out the lifetime, which keep-alive can move, the workdir made, resources, node
// selector, service account, the hard end as activeDeadlineSeconds, which the API server
// only ever lets a client lower), corral's labels on it, and the Sandbox a Pod reads as.
#pragma once

#include <string>

#include "corral/json.hpp"
#include "corral/types.hpp"
#include "settings.hpp"

namespace corral::kubernetes {

// The annotation that holds all of a sandbox's corral labels as JSON, whatever their
// text (Kubernetes label values allow 63 characters of [A-Za-z0-9._-] only).
inline constexpr const char* kLabelsAnnotation = "corral.dev/labels";
// The annotation that records the sandbox's --network, so destroy knows of its policy.
inline constexpr const char* kNetworkAnnotation = "corral.dev/network";
// The annotation on a claimed Pod that names its SandboxClaim, so destroy deletes the claim.
inline constexpr const char* kClaimAnnotation = "corral.dev/claim";
// The container that runs the sandbox's commands.
inline constexpr const char* kContainer = "sandbox";

// A fresh Pod name: corral-<12 hex digits>.
std::string new_pod_name();

// The metadata object of sandbox `name` in `ns`: corral's labels as Kubernetes labels where
// they are valid ones, all of them in kLabelsAnnotation, and `annotations`.
void write_metadata(json::Writer& w, const std::string& name, const std::string& ns, const StringMap& labels,
                    const StringMap& annotations);

// The Pod manifest of sandbox `name` in namespace `ns` with labels `labels`.
std::string pod_manifest(const Settings& settings, const std::string& name, const std::string& ns,
                         const StringMap& labels, const StringMap& annotations);

// "k=v,k2=v2" of the entries of `labels` that are valid Kubernetes labels, URL-encoded
// for a labelSelector; the rest is matched by the caller (the annotation holds them all).
std::string label_selector(const StringMap& labels);

// The Sandbox `pod` (a Pod object) stands for. Throws Error(invalid-argument) when it has
// no name or a field of the wrong type: read it with read_as (api_answers.hpp), which
// makes that the server's fault.
Sandbox sandbox_of(const json::Value& pod, const std::string& workdir);

// True when the string is a valid Kubernetes label key (`key`) or value.
bool is_label_text(const std::string& text, bool key);

// A namespace or Pod name as the API allows it (DNS-1123 label, 63 at most); refuses
// anything that could change the request's path.
void check_name(const std::string& name, const char* what);

// /api/v1/namespaces/NS/pods[/NAME]
std::string pods_path(const std::string& ns, const std::string& name = {});

}  // namespace corral::kubernetes
