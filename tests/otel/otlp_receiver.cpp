#include "otlp_receiver.hpp"

#include <google/protobuf/util/json_util.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>

namespace corral::test {
namespace {

std::string base64_of(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Hex to bytes; throws on anything else (the test then sees the problem).
std::string bytes_of_hex(const std::string& hex) {
  if (hex.size() % 2) throw std::runtime_error("odd-length hex id: " + hex);
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

void rewrite_ids(rapidjson::Value& v, rapidjson::Document::AllocatorType& a) {
  // By index: clang reads C++20's reversed != on RapidJSON's iterators as ambiguous.
  if (v.IsObject()) {
    for (rapidjson::SizeType i = 0; i < v.MemberCount(); ++i) {
      auto& m = *(v.MemberBegin() + i);
      const std::string key = m.name.GetString();
      if ((key == "traceId" || key == "spanId" || key == "parentSpanId") && m.value.IsString()) {
        const std::string b64 = base64_of(bytes_of_hex(m.value.GetString()));
        m.value.SetString(b64.c_str(), static_cast<rapidjson::SizeType>(b64.size()), a);
      } else {
        rewrite_ids(m.value, a);
      }
    }
  } else if (v.IsArray()) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) rewrite_ids(v[i], a);
  }
}

}  // namespace

std::string otlp_json_to_proto_json(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError()) throw std::runtime_error("not JSON");
  rewrite_ids(doc, doc.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  doc.Accept(w);
  return buffer.GetString();
}

OtlpReceiver::OtlpReceiver(Mode mode) : mode_(mode) {
  server_.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
    Received r;
    r.path = req.path;
    r.content_type = req.get_header_value("Content-Type");
    for (const auto& [k, v] : req.headers) r.headers.emplace_back(k, v);
    try {
      if (r.content_type == "application/x-protobuf") {
        r.decoded = r.request.ParseFromString(req.body);
        if (!r.decoded) r.problem = "not an ExportTraceServiceRequest";
      } else if (r.content_type == "application/json") {
        google::protobuf::util::JsonParseOptions options;  // strict: an unknown field is an error
        auto status = google::protobuf::util::JsonStringToMessage(otlp_json_to_proto_json(req.body), &r.request, options);
        r.decoded = status.ok();
        if (!r.decoded) r.problem = status.ToString();
      } else {
        r.problem = "content type " + r.content_type;
      }
    } catch (const std::exception& e) {
      r.problem = e.what();
    }
    {
      std::lock_guard lock(mutex_);
      received_.push_back(std::move(r));
      cv_.notify_all();
    }
    if (mode_ == Mode::never_answer) {
      // Holds the connection without a byte of answer, until the test ends.
      while (!stopping_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return;
    }
    otlp::collector::trace::v1::ExportTraceServiceResponse answer;
    res.set_content(answer.SerializeAsString(), "application/x-protobuf");
  });
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

OtlpReceiver::~OtlpReceiver() {
  stopping_ = true;
  server_.stop();
  thread_.join();
}

std::string OtlpReceiver::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<OtlpReceiver::Received> OtlpReceiver::received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

bool OtlpReceiver::wait_for(std::size_t n) const {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return received_.size() >= n; });
}

std::vector<otlp::trace::v1::Span> spans_of(const otlp::collector::trace::v1::ExportTraceServiceRequest& request) {
  std::vector<otlp::trace::v1::Span> out;
  for (const auto& rs : request.resource_spans())
    for (const auto& ss : rs.scope_spans())
      for (const auto& s : ss.spans()) out.push_back(s);
  return out;
}

std::string attribute(const google::protobuf::RepeatedPtrField<otlp::common::v1::KeyValue>& attributes,
                      const std::string& key) {
  for (const auto& kv : attributes) {
    if (kv.key() != key) continue;
    const auto& v = kv.value();
    if (v.has_string_value()) return v.string_value();
    if (v.has_int_value()) return std::to_string(v.int_value());
    if (v.has_bool_value()) return v.bool_value() ? "true" : "false";
    return "?";
  }
  return "";
}

std::string hex_of(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

}  // namespace corral::test
