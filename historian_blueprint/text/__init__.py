"""The bottom floor: text helpers with no project imports.

``spans`` (sentences with offsets, locators), ``words`` (tokens, stems, numbers, the word classes of the
language), ``normalize`` (quotes, names, titles, quotations), ``markers`` (the ``[n]`` citation marker and
inline ``[source-id]`` citations) and ``claims`` (a text cut into checkable sentence claims). One
implementation of each, imported by every floor above.
"""
