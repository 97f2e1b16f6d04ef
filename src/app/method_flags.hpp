#pragma once
// The flags of a command that one method reads, declared in the method's own file and bound to the method's own
// options. Several methods may declare the same flag (--seed, --hemicube, --atlas), each with its own type, default
// and help line: the command registers every flag once, as text, and hands what was given to the chosen method's
// binding alone (registerMethodFlags, assignGivenFlags); a flag the chosen method does not declare is refused,
// naming the methods that do.
#include <CLI/CLI.hpp>

#include <charconv>
#include <deque>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ibrr::app {

class MethodFlags {
public:
  // A flag with a value parsed into `value` (a number or a string); its value before parsing is its default, shown
  // in --help. The help line says what the method does with it.
  template <class T>
  void option(const std::string& flag, T& value, const std::string& help) {
    const std::string defaultText = CLI::detail::to_string(value);
    declare({flag, help, defaultText, typeName<T>(), CLI::detail::type_name<T>(), true, false, [&value](const std::string& text) {
               // A whole number is decimal digits, in range: CLI11's strtoull would wrap "-3" to 2^64 − 3 and read
               // "021" as octal 17.
               if constexpr (std::is_integral_v<T>) {
                 T parsed{};
                 const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
                 if (error != std::errc() || end != text.data() + text.size()) return false;
                 value = parsed;
                 return true;
               } else {
                 return CLI::detail::lexical_cast(text, value);
               }
             }});
  }
  // A flag with a value the method turns into its setting itself (a choice such as on|off): `parse` throws
  // ibrr::Error naming the flag when the text is not one it takes.
  void choice(const std::string& flag, std::function<void(const std::string&)> parse, const std::string& defaultText,
              const std::string& help);
  // A switch without a value: given, `value` becomes true.
  void toggle(const std::string& flag, bool& value, const std::string& help);
  // A flag that may be given again and again, each value appended to `values`.
  void list(const std::string& flag, std::vector<std::string>& values, const std::string& help);

  // True when the command line gave `flag` (after assignGivenFlags).
  [[nodiscard]] bool given(const std::string& flag) const { return m_given.count(flag) > 0; }

  struct Declared {
    std::string flag;
    std::string help;
    std::string defaultText;
    std::string typeName;     // what a value must be, for the refusal of one that is not
    std::string displayType;  // for --help: INT, UINT, FLOAT, TEXT
    bool takesValue = true;
    bool repeatable = false;                         // list(): assign takes each value given
    std::function<bool(const std::string&)> assign;  // false: the text is not of the flag's type
  };
  [[nodiscard]] const std::vector<Declared>& declared() const { return m_declared; }
  [[nodiscard]] const Declared* find(const std::string& flag) const;
  void markGiven(const std::string& flag) { m_given.insert(flag); }

private:
  template <class T>
  static std::string typeName() {
    if constexpr (std::is_floating_point_v<T>) return "number";
    else if constexpr (std::is_unsigned_v<T>) return "whole number ≥ 0";
    else if constexpr (std::is_integral_v<T>) return "whole number";
    else return "value";
  }
  void declare(Declared declared);
  std::vector<Declared> m_declared;
  std::set<std::string> m_given;
};

// One method's name and the flags it declared.
struct DeclaredFlags {
  std::string_view method;
  MethodFlags* flags;
};

// What the command holds for the flags of its methods: the text given for each (a switch: whether it was given).
struct CommandFlags {
  struct Entry {
    std::string flag;
    std::string text;
    std::vector<std::string> texts;  // a repeatable flag's values
    bool toggled = false;
    CLI::Option* option = nullptr;
  };
  std::deque<Entry> entries;  // in the order of their first declaration (table order, then each method's); stable
};

// Registers every flag the methods declared on `command`, once each, with a help line that names the methods that
// read it ("gather, matrix: ...", or one line a method where their help differs) and each one's default.
void registerMethodFlags(CLI::App& command, std::span<const DeclaredFlags> methods, CommandFlags& flags);

// After parsing: hands each flag given to `chosen`'s binding, or refuses it (CLI::ValidationError) naming the
// methods that read it; a value not of the flag's type is refused naming the flag and the value.
void assignGivenFlags(const CLI::App& command, const CommandFlags& flags, std::span<const DeclaredFlags> methods,
                      std::string_view chosen);

// Registers one method's flags on a command of its own (the viewer's bake, Keller's frame in `ibrr render`), each
// assigned as CLI11 parses it.
void addFlagsToCommand(CLI::App& command, const MethodFlags& flags);

}  // namespace ibrr::app
