#pragma once

#include <cstddef>

namespace stagegate::manifest {

/// One row of an enum's table of names, as manifests spell them.
template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// The manifest name of `value` in `names`; "?" for a value the table lacks.
template <typename E, size_t N>
const char* NameOf(E value, const EnumName<E> (&names)[N]) {
  for (const EnumName<E>& entry : names)
    if (entry.value == value) return entry.name;
  return "?";
}

}  // namespace stagegate::manifest
