#include "worker/content/charset_labels.h"

const vf_encoding vf_encodings[] = {
    { VF_CS_UTF8, "utf-8", NULL,
      "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8" },
    { VF_CS_WINDOWS_1252, "windows-1252", NULL,
      "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
      "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252" },
    { VF_CS_UTF16LE, "utf-16le", NULL,
      "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le" },
    { VF_CS_UTF16BE, "utf-16be", NULL, "unicodefffe utf-16be" },
    { VF_CS_X_USER_DEFINED, "x-user-defined", NULL, "x-user-defined" },
    { VF_CS_ISO_8859_16, "iso-8859-16", NULL, "iso-8859-16" },
    { VF_CS_IBM866, "ibm866", "ibm-866_P100-1995", "866 cp866 csibm866 ibm866" },
    { VF_CS_ISO_8859_2, "iso-8859-2", "ISO-8859-2",
      "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2" },
    { VF_CS_ISO_8859_3, "iso-8859-3", "ISO-8859-3",
      "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3" },
    { VF_CS_ISO_8859_4, "iso-8859-4", "ISO-8859-4",
      "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4" },
    { VF_CS_ISO_8859_5, "iso-8859-5", "ISO-8859-5",
      "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 "
      "iso_8859-5:1988" },
    { VF_CS_ISO_8859_6, "iso-8859-6", "ISO-8859-6",
      "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
      "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987" },
    { VF_CS_ISO_8859_7, "iso-8859-7", "ISO-8859-7",
      "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
      "iso_8859-7 iso_8859-7:1987 sun_eu_greek" },
    { VF_CS_ISO_8859_8, "iso-8859-8", "ISO-8859-8",
      "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
      "iso_8859-8 iso_8859-8:1988 visual" },
    { VF_CS_ISO_8859_8_I, "iso-8859-8-i", "ISO-8859-8", "csiso88598i iso-8859-8-i logical" },
    { VF_CS_ISO_8859_10, "iso-8859-10", "ISO-8859-10",
      "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6" },
    { VF_CS_ISO_8859_13, "iso-8859-13", "ISO-8859-13", "iso-8859-13 iso8859-13 iso885913" },
    { VF_CS_ISO_8859_14, "iso-8859-14", "ISO-8859-14", "iso-8859-14 iso8859-14 iso885914" },
    { VF_CS_ISO_8859_15, "iso-8859-15", "ISO-8859-15",
      "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9" },
    { VF_CS_KOI8_R, "koi8-r", "KOI8-R", "cskoi8r koi koi8 koi8-r koi8_r" },
    { VF_CS_KOI8_U, "koi8-u", "KOI8-U", "koi8-ru koi8-u" },
    { VF_CS_MACINTOSH, "macintosh", "macintosh", "csmacintosh mac macintosh x-mac-roman" },
    { VF_CS_WINDOWS_874, "windows-874", "windows-874",
      "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874" },
    { VF_CS_WINDOWS_1250, "windows-1250", "windows-1250", "cp1250 windows-1250 x-cp1250" },
    { VF_CS_WINDOWS_1251, "windows-1251", "windows-1251", "cp1251 windows-1251 x-cp1251" },
    { VF_CS_WINDOWS_1253, "windows-1253", "windows-1253", "cp1253 windows-1253 x-cp1253" },
    { VF_CS_WINDOWS_1254, "windows-1254", "windows-1254",
      "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 "
      "latin5 windows-1254 x-cp1254" },
    { VF_CS_WINDOWS_1255, "windows-1255", "windows-1255", "cp1255 windows-1255 x-cp1255" },
    { VF_CS_WINDOWS_1256, "windows-1256", "windows-1256", "cp1256 windows-1256 x-cp1256" },
    { VF_CS_WINDOWS_1257, "windows-1257", "windows-1257", "cp1257 windows-1257 x-cp1257" },
    { VF_CS_WINDOWS_1258, "windows-1258", "windows-1258", "cp1258 windows-1258 x-cp1258" },
    { VF_CS_X_MAC_CYRILLIC, "x-mac-cyrillic", "x-mac-cyrillic", "x-mac-cyrillic x-mac-ukrainian" },
    /* WHATWG decodes GBK with the gb18030 decoder. */
    { VF_CS_GBK, "gbk", "gb18030",
      "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk" },
    { VF_CS_GB18030, "gb18030", "gb18030", "gb18030" },
    { VF_CS_BIG5, "big5", "Big5-HKSCS", "big5 big5-hkscs cn-big5 csbig5 x-x-big5" },
    { VF_CS_EUC_JP, "euc-jp", "EUC-JP", "cseucpkdfmtjapanese euc-jp x-euc-jp" },
    { VF_CS_ISO_2022_JP, "iso-2022-jp", "ISO-2022-JP", "csiso2022jp iso-2022-jp" },
    /* WHATWG Shift_JIS is Microsoft's variant. */
    { VF_CS_SHIFT_JIS, "shift_jis", "windows-31j",
      "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis" },
    /* WHATWG EUC-KR is windows-949. */
    { VF_CS_EUC_KR, "euc-kr", "windows-949",
      "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 "
      "ksc_5601 windows-949" },
};

const size_t vf_n_encodings = sizeof vf_encodings / sizeof vf_encodings[0];

const char *const vf_replacement_labels =
    "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement";
