// The dashboard's static files (src/node/serve/dashboard/), embedded into the binary at build
// time (embed_dashboard.cmake): the node serves them without reading the filesystem, so a
// request path is only ever compared with this fixed list (no directory traversal to guard).
#pragma once

#include <string_view>

namespace genvm::node::serve {

struct StaticFile {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;  // from the file's extension
  std::string_view body;
};

// The file served at `path` (the request target without its query; "/" is "/index.html"), or
// nullptr.
const StaticFile* dashboard_file(std::string_view path);

}  // namespace genvm::node::serve
