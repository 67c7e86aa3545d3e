// Path and URI helpers for FileSystem paths: plain paths ("/var/ck", "ck/job"), `file:///var/ck` and
// `s3://bucket/prefix`. A URI's root ("s3://bucket", "file://") is never split or crossed: the parent of
// "s3://bucket/ck" is "s3://bucket", and "s3://bucket" has none.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sluice::fs {

// The URI scheme of `path`, lower-cased ("s3" of "s3://b/k", "file" of "file:///x"); "" for a plain path. A
// scheme is RFC 3986's `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` followed by "://".
std::string uri_scheme(std::string_view path);
// The would-be scheme of a plain path that starts like a URI but lacks the "//" ("s3" of "s3:/b/k" or
// "s3:b/k"), lower-cased; "" otherwise. Such a path is almost always a mistyped URI, so FileSystemRegistry
// refuses it instead of creating a local folder named "s3:" (write "./s3:..." for such a local folder).
std::string mistyped_uri_scheme(std::string_view path);
// The authority of a file:// URI ("host" of "file://host/x"; "" of "file:///x"); "" for any other path.
std::string file_uri_host(std::string_view path);
// The length of the root that path helpers never split: "s3://bucket" (up to the first '/' after "://"),
// "file://" of "file:///x"; 0 for a plain path.
size_t uri_root_length(std::string_view path);
// `a/b` without doubling separators.
std::string join_path(std::string_view a, std::string_view b);
// The last path component ("chk-3" of "/ck/job/chk-3/"), ignoring trailing slashes; "" for a URI's root.
std::string path_file_name(std::string_view path);
// Everything before the last component ("/ck/job" of "/ck/job/chk-3", "s3://b" of "s3://b/x"); "" for a single
// relative component or a URI's root, "/" for "/x".
std::string path_parent(std::string_view path);
// `path` without its "file://" or "file://localhost" prefix (a path on the local disk); other paths unchanged.
std::string strip_file_scheme(std::string_view path);
// A path with "." and ".." components and repeated separators resolved lexically, its URI root kept
// ("s3://b/a/../c" -> "s3://b/c"). Local paths are not resolved against the disk (no symlinks followed).
std::string normalize_path(std::string_view path);

// A path's canonical spelling for comparing two paths: a local path (plain or file://) made absolute with its
// symlinks resolved as far as it exists (std::filesystem::weakly_canonical), without a trailing "/" (so "out",
// "./out/" and "out/." are one path, whether or not it exists yet); any other URI normalize_path'd.
std::string canonical_path(std::string_view path);

}  // namespace sluice::fs
