"""The bottom layer: text helpers with no project imports.

``spans`` (sentences with offsets, locators), ``words`` (normalizing, tokens, stems, numbers, the word classes
of the language), ``quantities`` (figures and rounding), ``quotations`` (quotations, questions, a quote as prose
shows it), ``markers`` (the ``[n]`` citation marker and
inline ``[source-id]`` citations) and ``claims`` (a text cut into checkable sentence claims). One
implementation of each, imported by every layer above.
"""
