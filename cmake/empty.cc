// Nothing: the translation unit that cc_test_pch (helpers.cmake) builds its precompiled header
// beside.
