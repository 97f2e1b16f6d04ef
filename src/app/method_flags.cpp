#include "app/method_flags.hpp"

#include "app/cli_support.hpp"
#include "util/error.hpp"

#include <algorithm>

namespace ibrr::app {

void MethodFlags::declare(Declared declared) {
  IBRR_CHECK(!find(declared.flag), "a method declares each of its flags once (" + declared.flag + ")");
  m_declared.push_back(std::move(declared));
}

void MethodFlags::choice(const std::string& flag, std::function<void(const std::string&)> parse,
                         const std::string& defaultText, const std::string& help) {
  declare({flag, help, defaultText, "value", "TEXT", true, false, [parse = std::move(parse)](const std::string& text) {
             parse(text);
             return true;
           }});
}

void MethodFlags::toggle(const std::string& flag, bool& value, const std::string& help) {
  declare({flag, help, "", "", "", false, false, [&value](const std::string&) {
             value = true;
             return true;
           }});
}

void MethodFlags::list(const std::string& flag, std::vector<std::string>& values, const std::string& help) {
  Declared declared{flag, help, "", "value", "TEXT", true, true, [&values](const std::string& text) {
                      values.push_back(text);
                      return true;
                    }};
  declare(std::move(declared));
}

const MethodFlags::Declared* MethodFlags::find(const std::string& flag) const {
  for (const Declared& declared : m_declared)
    if (declared.flag == flag) return &declared;
  return nullptr;
}

namespace {

// The refusal of a value that is not of the flag's type.
CLI::ValidationError typeError(const CLI::App& command, const MethodFlags::Declared& declared, const std::string& text) {
  return CLI::ValidationError(declared.flag + " " + text + ": give a " + declared.typeName + " (see ibrr " +
                              command.get_name() + " --help)");
}

// The help line of `flag`: "a, b: help (default x)" for the readers that say the same, their defaults listed where
// they differ ("default 96 for a, 256 for b"); groups of readers that say different things joined by "; ".
std::string combinedHelp(const std::string& flag, std::span<const DeclaredFlags> methods) {
  struct Part {
    std::string help;
    std::vector<std::pair<std::string, std::string>> readers;  // (method, default)
  };
  std::vector<Part> parts;
  for (const DeclaredFlags& method : methods)
    if (const MethodFlags::Declared* declared = method.flags->find(flag)) {
      auto same = std::find_if(parts.begin(), parts.end(), [&](const Part& part) { return part.help == declared->help; });
      if (same == parts.end()) same = parts.insert(parts.end(), Part{declared->help, {}});
      same->readers.emplace_back(std::string(method.method), declared->defaultText);
    }
  std::string text;
  for (const Part& part : parts) {
    std::string readers, defaults;
    bool oneDefault = true;
    for (const auto& [method, defaultText] : part.readers) {
      readers += (readers.empty() ? "" : ", ") + method;
      oneDefault = oneDefault && defaultText == part.readers.front().second;
      if (!defaultText.empty()) defaults += (defaults.empty() ? "" : ", ") + defaultText + " for " + method;
    }
    if (oneDefault) defaults = part.readers.front().second;
    text += (text.empty() ? "" : "; ") + readers + ": " + part.help + (defaults.empty() ? "" : " (default " + defaults + ")");
  }
  return text;
}

}  // namespace

void registerMethodFlags(CLI::App& command, std::span<const DeclaredFlags> methods, CommandFlags& flags) {
  for (const DeclaredFlags& method : methods)
    for (const MethodFlags::Declared& declared : method.flags->declared()) {
      if (std::any_of(flags.entries.begin(), flags.entries.end(),
                      [&](const CommandFlags::Entry& entry) { return entry.flag == declared.flag; }))
        continue;
      CommandFlags::Entry& entry = flags.entries.emplace_back();
      entry.flag = declared.flag;
      const std::string help = combinedHelp(declared.flag, methods);
      if (declared.repeatable)
        entry.option = command.add_option(declared.flag, entry.texts, help)->allow_extra_args(false);
      else if (declared.takesValue)
        entry.option = command.add_option(declared.flag, entry.text, help)->type_name(declared.displayType);
      else
        entry.option = command.add_flag(declared.flag, entry.toggled, help);
    }
}

void assignGivenFlags(const CLI::App& command, const CommandFlags& flags, std::span<const DeclaredFlags> methods,
                      std::string_view chosen) {
  const auto chosenMethod = std::find_if(methods.begin(), methods.end(),
                                         [&](const DeclaredFlags& method) { return method.method == chosen; });
  IBRR_CHECK(chosenMethod != methods.end(), "the chosen method is one of the table's");
  for (const CommandFlags::Entry& entry : flags.entries) {
    if (entry.option->count() == 0) continue;
    const MethodFlags::Declared* declared = chosenMethod->flags->find(entry.flag);
    if (!declared) {
      std::vector<std::string_view> readers;
      for (const DeclaredFlags& method : methods)
        if (method.flags->find(entry.flag)) readers.push_back(method.method);
      throw foreignFlagError(command, entry.flag, chosen, readers);
    }
    for (const std::string& text : declared->repeatable ? entry.texts : std::vector<std::string>{entry.text})
      if (!declared->assign(text)) throw typeError(command, *declared, text);
    chosenMethod->flags->markGiven(entry.flag);
  }
}

void addFlagsToCommand(CLI::App& command, const MethodFlags& flags) {
  for (const MethodFlags::Declared& declared : flags.declared()) {
    IBRR_CHECK(!declared.repeatable, "a command of one method's flags takes no repeatable flag (" + declared.flag + ")");
    if (!declared.takesValue) {
      command.add_flag_callback(declared.flag, [assign = declared.assign] { (void)assign(""); }, declared.help);
      continue;
    }
    command
        .add_option_function<std::string>(
            declared.flag,
            [&command, declared](const std::string& text) {
              if (!declared.assign(text)) throw typeError(command, declared, text);
            },
            declared.help)
        ->type_name(declared.displayType)
        ->default_str(declared.defaultText);
  }
}

}  // namespace ibrr::app
