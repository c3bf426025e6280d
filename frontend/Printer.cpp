#include "Printer.h"
namespace dfl {
std::string printFile(const ast::File &file, const SourceManager &sm) { return sm.text(file.fileId); }
}
