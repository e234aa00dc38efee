// Reads FreeRADIUS-format dictionary files (docs/dictionary.md).
#include "radius/dictionary_builder.h"

namespace rw::radius {

Result<std::shared_ptr<const Dictionary>, DictionaryError> Dictionary::load(const std::string& path) {
  return fail(DictionaryError{path, 0, 0, "dictionary files are not supported yet"});
}

Result<std::shared_ptr<const Dictionary>, DictionaryError> Dictionary::parse(std::string_view,
                                                                             std::string_view file_name) {
  return fail(DictionaryError{std::string(file_name), 0, 0, "dictionary files are not supported yet"});
}

}  // namespace rw::radius
