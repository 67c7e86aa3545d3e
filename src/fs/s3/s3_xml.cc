#include "fs/s3/s3_xml.h"

#include <pugixml.hpp>

#include <charconv>

namespace sluice::s3 {

namespace {

std::string body_start(std::string_view xml) {
  constexpr size_t kShown = 200;
  std::string out(xml.substr(0, kShown));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (xml.size() > kShown) out += "...";
  return out;
}

// Parses `xml` and checks the root element's name.
Result<pugi::xml_node> parse_root(pugi::xml_document& doc, std::string_view xml, const char* root_name) {
  pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed) {
    return Status::corruption(std::string("S3 response is not well-formed XML (expected <") + root_name +
                              ">): " + parsed.description() + " at offset " + std::to_string(parsed.offset) +
                              "; body: '" + body_start(xml) + "'");
  }
  pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != root_name) {
    return Status::corruption(std::string("S3 response has root element <") + root.name() + ">, expected <" +
                              root_name + ">; body: '" + body_start(xml) + "'");
  }
  return root;
}

std::string text_of(const pugi::xml_node& node, const char* child) { return node.child(child).text().as_string(); }

bool bool_of(const pugi::xml_node& node, const char* child) {
  std::string_view v = node.child(child).text().as_string();
  return v == "true" || v == "TRUE" || v == "True";
}

template <class T>
Result<T> number_of(const pugi::xml_node& node, const char* child, const char* context) {
  std::string_view v = node.child(child).text().as_string();
  if (v.empty()) return T{0};
  T out{};
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return Status::corruption(std::string("S3 ") + context + ": <" + child + "> is '" + std::string(v) +
                              "', expected a non-negative integer");
  }
  return out;
}

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
}

}  // namespace

bool same_etag(std::string_view a, std::string_view b) {
  auto strip = [](std::string_view s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return s;
  };
  return strip(a) == strip(b);
}

Result<S3ErrorBody> parse_error(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "Error"));
  return S3ErrorBody{text_of(root, "Code"), text_of(root, "Message"), text_of(root, "RequestId")};
}

bool is_error_document(std::string_view xml) {
  pugi::xml_document doc;
  return parse_root(doc, xml, "Error").is_ok();
}

Result<ListObjectsPage> parse_list_objects_v2(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "ListBucketResult"));
  ListObjectsPage page;
  for (pugi::xml_node c : root.children("Contents")) {
    ObjectInfo info;
    info.key = text_of(c, "Key");
    SLUICE_ASSIGN_OR_RETURN(info.size_bytes, number_of<uint64_t>(c, "Size", "ListObjectsV2 <Contents>"));
    info.etag = text_of(c, "ETag");
    page.objects.push_back(std::move(info));
  }
  for (pugi::xml_node p : root.children("CommonPrefixes")) page.common_prefixes.push_back(text_of(p, "Prefix"));
  page.truncated = bool_of(root, "IsTruncated");
  page.next_continuation_token = text_of(root, "NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty()) {
    return Status::corruption("S3 ListObjectsV2: <IsTruncated> is true but <NextContinuationToken> is missing; body: '" +
                              body_start(xml) + "'");
  }
  return page;
}

Result<std::string> parse_create_multipart_upload(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "InitiateMultipartUploadResult"));
  std::string upload_id = text_of(root, "UploadId");
  if (upload_id.empty()) {
    return Status::corruption("S3 CreateMultipartUpload: no <UploadId> in the response; body: '" + body_start(xml) +
                              "'");
  }
  return upload_id;
}

Result<std::string> parse_complete_multipart_upload(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "CompleteMultipartUploadResult"));
  return text_of(root, "ETag");
}

Result<ListPartsPage> parse_list_parts(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "ListPartsResult"));
  ListPartsPage page;
  for (pugi::xml_node p : root.children("Part")) {
    PartInfo part;
    SLUICE_ASSIGN_OR_RETURN(part.part_number, number_of<int32_t>(p, "PartNumber", "ListParts <Part>"));
    part.etag = text_of(p, "ETag");
    SLUICE_ASSIGN_OR_RETURN(part.size_bytes, number_of<uint64_t>(p, "Size", "ListParts <Part>"));
    page.parts.push_back(std::move(part));
  }
  page.truncated = bool_of(root, "IsTruncated");
  SLUICE_ASSIGN_OR_RETURN(page.next_part_number_marker,
                          number_of<int32_t>(root, "NextPartNumberMarker", "ListParts"));
  return page;
}

Result<ListMultipartUploadsPage> parse_list_multipart_uploads(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "ListMultipartUploadsResult"));
  ListMultipartUploadsPage page;
  for (pugi::xml_node u : root.children("Upload")) {
    page.uploads.push_back(MultipartUploadInfo{text_of(u, "Key"), text_of(u, "UploadId"), text_of(u, "Initiated")});
  }
  page.truncated = bool_of(root, "IsTruncated");
  page.next_key_marker = text_of(root, "NextKeyMarker");
  page.next_upload_id_marker = text_of(root, "NextUploadIdMarker");
  return page;
}

Result<std::vector<DeleteObjectError>> parse_delete_objects(std::string_view xml) {
  pugi::xml_document doc;
  SLUICE_ASSIGN_OR_RETURN(pugi::xml_node root, parse_root(doc, xml, "DeleteResult"));
  std::vector<DeleteObjectError> errors;
  for (pugi::xml_node e : root.children("Error")) {
    errors.push_back(DeleteObjectError{text_of(e, "Key"), text_of(e, "Code"), text_of(e, "Message")});
  }
  return errors;
}

std::string complete_multipart_upload_body(const std::vector<CompletedPart>& parts) {
  std::string out = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  for (const CompletedPart& part : parts) {
    out += "<Part><PartNumber>" + std::to_string(part.part_number) + "</PartNumber><ETag>";
    append_escaped(out, part.etag);
    out += "</ETag></Part>";
  }
  out += "</CompleteMultipartUpload>";
  return out;
}

std::string delete_objects_body(const std::vector<std::string>& keys, bool quiet) {
  std::string out = "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>";
  out += quiet ? "true" : "false";
  out += "</Quiet>";
  for (const std::string& key : keys) {
    out += "<Object><Key>";
    append_escaped(out, key);
    out += "</Key></Object>";
  }
  out += "</Delete>";
  return out;
}

}  // namespace sluice::s3
