#include "network_policy.hpp"

#include <arpa/inet.h>

#include <cstring>

#include "names.hpp"
#include "private_network.hpp"
#include "store.hpp"

namespace corral::kubernetes::standin {
namespace {

using T = FieldError::Type;

// Address family and prefix of a CIDR ("10.0.0.0/8", "2001:db8::/64"), or -1 when it is not one.
struct Cidr {
  int family = -1;
  unsigned char bytes[16] = {};
  int bits = 0;
};

Cidr parse_cidr(const std::string& text) {
  Cidr out;
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return out;
  const std::string addr = text.substr(0, slash), bits = text.substr(slash + 1);
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos) return out;
  int family = addr.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  if (inet_pton(family, addr.c_str(), out.bytes) != 1) return out;
  out.bits = std::stoi(bits);
  if (out.bits > (family == AF_INET ? 32 : 128)) return out;
  out.family = family;
  return out;
}

bool inside(const Cidr& inner, const Cidr& outer) {
  if (inner.family != outer.family || inner.bits < outer.bits) return false;
  for (int bit = 0; bit < outer.bits; ++bit) {
    const unsigned char mask = static_cast<unsigned char>(0x80 >> (bit % 8));
    if ((inner.bytes[bit / 8] & mask) != (outer.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

void validate_selector(const json::Value* selector, const std::string& path, std::vector<FieldError>& out) {
  if (!selector || !selector->IsObject()) return;
  for (const auto& [key, value] : labels_at(*selector, {"matchLabels"})) {
    for (const auto& e : qualified_name_errors(key)) out.push_back({T::invalid, path + ".matchLabels", go_quote(key), e});
    for (const auto& e : label_value_errors(value)) out.push_back({T::invalid, path + ".matchLabels", go_quote(value), e});
  }
  const json::Value* expressions = json::find(*selector, "matchExpressions");
  if (!expressions || !expressions->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < expressions->Size(); ++i) {
    const json::Value& e = (*expressions)[i];
    const std::string where = path + ".matchExpressions[" + std::to_string(i) + "]";
    const std::string op = string_at(e, {"operator"});
    const json::Value* values = json::find(e, "values");
    const bool has_values = values && values->IsArray() && !values->Empty();
    if (op == "In" || op == "NotIn") {
      if (!has_values) out.push_back({T::required, where + ".values", "", "must be specified when `operator` is 'In' or 'NotIn'"});
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (has_values) out.push_back({T::forbidden, where + ".values", "", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"});
    } else {
      out.push_back({T::invalid, where + ".operator", go_quote(op), "not a valid selector operator"});
    }
  }
}

void validate_peers(const json::Value* peers, const std::string& path, std::vector<FieldError>& out) {
  if (!peers || !peers->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < peers->Size(); ++i) {
    const json::Value& peer = (*peers)[i];
    const std::string where = path + "[" + std::to_string(i) + "]";
    const json::Value* block = json::find(peer, "ipBlock");
    const bool selectors = json::find(peer, "podSelector") || json::find(peer, "namespaceSelector");
    if (!block && !selectors) out.push_back({T::required, where, "", "must specify a peer"});
    if (block && selectors) out.push_back({T::forbidden, where, "", "may not specify both ipBlock and another peer"});
    validate_selector(json::find(peer, "podSelector"), where + ".podSelector", out);
    validate_selector(json::find(peer, "namespaceSelector"), where + ".namespaceSelector", out);
    if (!block) continue;
    const std::string cidr_text = string_at(*block, {"cidr"});
    const Cidr cidr = parse_cidr(cidr_text);
    if (cidr_text.empty()) out.push_back({T::required, where + ".ipBlock.cidr", "", ""});
    else if (cidr.family < 0)
      out.push_back({T::invalid, where + ".ipBlock.cidr", go_quote(cidr_text),
                     "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"});
    const json::Value* except = json::find(*block, "except");
    if (!except || !except->IsArray()) continue;
    for (rapidjson::SizeType j = 0; j < except->Size(); ++j) {
      const std::string text = (*except)[j].IsString() ? (*except)[j].GetString() : "";
      const std::string ewhere = where + ".ipBlock.except[" + std::to_string(j) + "]";
      const Cidr e = parse_cidr(text);
      if (e.family < 0)
        out.push_back({T::invalid, ewhere, go_quote(text), "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"});
      else if (cidr.family >= 0 && (!inside(e, cidr) || e.bits == cidr.bits))
        out.push_back({T::invalid, ewhere, go_quote(text), "must be a strict subset of `cidr`"});
    }
  }
}

void validate_ports(const json::Value* ports, const std::string& path, std::vector<FieldError>& out) {
  if (!ports || !ports->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
    const json::Value* port = json::find((*ports)[i], "port");
    const std::string where = path + "[" + std::to_string(i) + "].port";
    if (port && port->IsInt() && (port->GetInt() < 1 || port->GetInt() > 65535))
      out.push_back({T::invalid, where, std::to_string(port->GetInt()), "must be between 1 and 65535, inclusive"});
    if (port && port->IsString())
      for (const auto& e : dns1123_label_errors(port->GetString()))
        out.push_back({T::invalid, where, go_quote(port->GetString()), e});
  }
}

// Whether an egress rule lets the pod reach 127.0.0.1 (or everything).
bool rule_reaches_loopback(const json::Value& rule) {
  const json::Value* to = json::find(rule, "to");
  if (!to || !to->IsArray() || to->Empty()) return true;  // no peers: every destination
  for (const auto& peer : to->GetArray()) {
    const json::Value* block = json::find(peer, "ipBlock");
    if (!block) continue;  // pods and namespaces of the cluster: never this machine's loopback
    std::vector<std::string> except;
    if (const json::Value* e = json::find(*block, "except"); e && e->IsArray())
      for (const auto& x : e->GetArray())
        if (x.IsString()) except.push_back(x.GetString());
    if (test::allows_loopback({string_at(*block, {"cidr"})}) && !test::allows_loopback(except)) return true;
  }
  return false;
}

}  // namespace

void default_network_policy(json::Document& policy) {
  auto& a = policy.GetAllocator();
  json::Value& spec = object_member(policy, "spec", a);
  if (!json::find(spec, "podSelector")) set_member(spec, "podSelector", json::Value(rapidjson::kObjectType), a);
  const json::Value* types = json::find(spec, "policyTypes");
  if (!types || !types->IsArray() || types->Empty()) {
    json::Value list(rapidjson::kArrayType);
    list.PushBack(string_value("Ingress", a), a);
    const json::Value* egress = json::find(spec, "egress");
    if (egress && egress->IsArray() && !egress->Empty()) list.PushBack(string_value("Egress", a), a);
    set_member(spec, "policyTypes", std::move(list), a);
  }
  for (const char* direction : {"ingress", "egress"}) {
    if (!spec.HasMember(direction) || !spec[direction].IsArray()) continue;
    for (auto& rule : spec[direction].GetArray()) {
      if (!rule.IsObject() || !rule.HasMember("ports") || !rule["ports"].IsArray()) continue;
      for (auto& port : rule["ports"].GetArray())
        if (port.IsObject() && !port.HasMember("protocol")) set_string(port, "protocol", "TCP", a);
    }
  }
}

std::vector<FieldError> validate_network_policy(const json::Value& policy) {
  std::vector<FieldError> out;
  validate_selector(at(policy, {"spec", "podSelector"}), "spec.podSelector", out);
  for (const char* direction : {"ingress", "egress"}) {
    const json::Value* rules = at(policy, {"spec", direction});
    if (!rules || !rules->IsArray()) continue;
    for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
      const std::string path = std::string("spec.") + direction + "[" + std::to_string(i) + "]";
      validate_ports(json::find((*rules)[i], "ports"), path + ".ports", out);
      const char* peers = std::strcmp(direction, "ingress") == 0 ? "from" : "to";
      validate_peers(json::find((*rules)[i], peers), path + "." + peers, out);
    }
  }
  return out;
}

LabelSelector label_selector_from(const json::Value& selector) {
  using Op = LabelRequirement::Op;
  LabelSelector out;
  for (const auto& [key, value] : labels_at(selector, {"matchLabels"})) out.requirements.push_back({key, Op::equals, {value}});
  const json::Value* expressions = json::find(selector, "matchExpressions");
  if (expressions && expressions->IsArray())
    for (const auto& e : expressions->GetArray()) {
      LabelRequirement r;
      r.key = string_at(e, {"key"});
      const std::string op = string_at(e, {"operator"});
      r.op = op == "In" ? Op::in : op == "NotIn" ? Op::not_in : op == "Exists" ? Op::exists : Op::does_not_exist;
      if (const json::Value* values = json::find(e, "values"); values && values->IsArray())
        for (const auto& v : values->GetArray())
          if (v.IsString()) r.values.push_back(v.GetString());
      out.requirements.push_back(std::move(r));
    }
  return out;
}

bool egress_denied(const Store& store, const json::Value& pod) {
  const Labels labels = labels_of(pod);
  bool isolated = false;
  for (const auto& policy : store.list(network_policy_type(), string_at(pod, {"metadata", "namespace"}))) {
    const json::Value* selector = at(*policy, {"spec", "podSelector"});
    if (selector && !label_selector_from(*selector).matches(labels)) continue;
    bool egress = false;
    if (const json::Value* types = at(*policy, {"spec", "policyTypes"}); types && types->IsArray())
      for (const auto& t : types->GetArray())
        if (t.IsString() && std::string(t.GetString()) == "Egress") egress = true;
    if (!egress) continue;
    isolated = true;
    if (const json::Value* rules = at(*policy, {"spec", "egress"}); rules && rules->IsArray())
      for (const auto& rule : rules->GetArray())
        if (rule_reaches_loopback(rule)) return false;
  }
  return isolated;
}

}  // namespace corral::kubernetes::standin
