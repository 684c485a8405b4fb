// The fmt library's compiled part, built into the host from fmt's own headers instead of
// linking libfmt.so: the host links the C++ runtime statically (its start-up no longer
// loads and relocates libstdc++.so, about 0.7 ms of every command), so no C++ shared
// library may sit between it and its code; an exception fmt throws must be the host's own.
// The plugins keep the shared runtime; nothing C++ crosses the plugin ABI.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// What format.h declares extern (or leaves undefined) for the library to provide.
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
