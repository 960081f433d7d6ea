// HTML to readable Markdown, through the gumbo HTML5 parser (libgumbo): headings, paragraphs,
// links, emphasis, code, lists, quotes, tables and images; scripts, styles, forms and the head
// (but its title) are left out.
#pragma once

#include <string>
#include <string_view>

namespace lousho::agent::tools {

// `base` (scheme://host[:port]) makes links and images that start with "/" absolute.
std::string HtmlToMarkdown(std::string_view html, const std::string& base);
// The visible text only, one block per line.
std::string HtmlToText(std::string_view html);

}  // namespace lousho::agent::tools
