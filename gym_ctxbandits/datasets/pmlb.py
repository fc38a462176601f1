"""The Penn Machine Learning Benchmarks' classification sets (PMLB): the Contextual Bandit Bake-off's kind of data.

    from gym_ctxbandits.datasets import pmlb_sets, supervised
    pmlb_sets()                                   # the 164 sets: name, rows, features, classes (a DataFrame)
    supervised.load("pmlb:iris")                  # one as a Dataset; Supervised-v0 takes source="pmlb:iris"

PMLB (Olson et al. 2017; EpistasisLab/pmlb) collects UCI, OpenML and KEEL classification sets in one
format: `<name>.tsv.gz`, tab-separated with a header row, the label in the column `target`, every
other column a numeric feature (PMLB encoded categories as integers), no missing values. Bietti,
Agarwal and Langford's bake-off (JMLR 2021) turned hundreds of such sets into contextual bandits;
`Supervised-v0`'s `preset="cb-bakeoff"` plays them as it did (envs/classification.py).

Where a set is read (`data_home`: the argument, else $CTXBANDITS_DATA, else ~/.cache/gym-ctxbandits):
`<data home>/pmlb/<name>/<name>.tsv.gz`, PMLB's own layout and that of the `pmlb` package's cache, so
a folder of PMLB files, or a `pmlb.fetch_data(..., local_cache_dir=...)` cache, is a data home's
`pmlb/` as it is. When the file is not there, the optional `pmlb` package (`pip install pmlb`)
downloads it into that place (not with download=False or $CTXBANDITS_OFFLINE=1) and its SHA-256 is
recorded beside it in `<name>.tsv.gz.sha256` (`sha256sum -c` reads it); every later read checks the
file against that record, so a download changed or cut short afterwards is a `DatasetCorrupt`, never
a silently different dataset. A file put there by hand has no record and is checked for its format
only. `SETS` (and `pmlb_sets()`) is the list of the PMLB repository at commit 1c4487f2 (2020-05-15)
with its sizes, shipped with the package so that names can be checked and sets chosen offline.
"""

from __future__ import annotations

import difflib
import gzip
import os
import re
import shutil
import zlib
from pathlib import Path

from gym_ctxbandits.datasets._files import DatasetCorrupt, DatasetNotFound, offline

FOLDER = "pmlb"
LABEL = "target"
NAME = re.compile(r"[A-Za-z0-9][\w.+-]*")


def pmlb_sets():
    """The PMLB classification sets as a pandas DataFrame: `name`, `rows`, `features`, `classes`.

    One row per set of `SETS` (164 sets, 1,198,896 rows in all; the largest kddcup, 494,020 x 41,
    23 classes), in the order of PMLB's own list, whether or not a copy is at hand: choose sets by
    size with it (`sets[sets.rows <= 10_000]`) and play one with `source="pmlb:" + name`. A fresh
    DataFrame on every call.
    """
    import pandas as pd

    rows = [line.split() for line in SETS.strip().splitlines()]
    table = pd.DataFrame(rows, columns=["name", "rows", "features", "classes"])
    return table.astype({"rows": "int64", "features": "int64", "classes": "int64"})


def names() -> tuple[str, ...]:
    """The names of `SETS`, in its order."""
    return tuple(line.split(maxsplit=1)[0] for line in SETS.strip().splitlines())


def path(name: str, data_home=None) -> Path:
    """Where set `name` is read from and downloaded to: <data home>/pmlb/<name>/<name>.tsv.gz."""
    from gym_ctxbandits.datasets._files import data_home as home_of

    _check_name(name)
    return home_of(data_home) / FOLDER / name / f"{name}.tsv.gz"


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"pmlb:{name}: not a PMLB set name (letters, digits, _ . + -); e.g. pmlb:iris; "
                         "gym_ctxbandits.datasets.pmlb_sets() lists them")


def _package():
    """The optional `pmlb` package, or None when it is not installed."""
    try:
        import pmlb
    except ImportError:
        return None
    return pmlb


def _known(home: Path) -> set[str]:
    """Names a set may have: SETS, the `pmlb` package's classification sets, the folders at hand."""
    known = set(names())
    package = _package()
    if package is not None:
        known |= set(getattr(package, "classification_dataset_names", ()))
    folder = home / FOLDER
    if folder.is_dir():
        known |= {p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")}
    return known


def _unknown(name: str, home: Path) -> ValueError:
    """The error for a name PMLB does not have, naming the closest ones."""
    package = _package()
    if package is not None and name in getattr(package, "regression_dataset_names", ()):
        return ValueError(f"pmlb:{name} is one of PMLB's regression sets; a bandit needs a classification set "
                          "(gym_ctxbandits.datasets.pmlb_sets() lists them)")
    known = {k.lower(): k for k in _known(home)}
    close = difflib.get_close_matches(name.lower(), list(known), n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(repr(known[c]) for c in close)}?" if close else ""
    return ValueError(f"pmlb:{name}: PMLB has no classification set of that name.{hint} "
                      f"gym_ctxbandits.datasets.pmlb_sets() lists the {len(names())} sets")


def sha256_record(file: Path) -> Path:
    """The file beside a downloaded set that holds its SHA-256 (the `sha256sum` format)."""
    return file.with_name(file.name + ".sha256")


def _check_record(file: Path) -> None:
    """A downloaded set's SHA-256 against the one recorded when it was downloaded (nothing to check
    for a copy put there by hand)."""
    from gym_ctxbandits.datasets.manifest import sha256_of

    record = sha256_record(file)
    if not record.is_file():
        return
    recorded = (record.read_text().split() or [""])[0].lower()
    actual = sha256_of(file)
    if actual != recorded:
        raise DatasetCorrupt(f"{file}: its SHA-256 is {actual}, not {recorded or '(empty)'} as recorded in "
                             f"{record.name} when it was downloaded: the file changed since; delete both files to "
                             "download it again")


def _download(name: str, file: Path) -> None:
    """`pmlb.fetch_data` into a temporary folder beside `file`, then moved into place and its SHA-256 recorded."""
    from gym_ctxbandits.datasets.manifest import sha256_of

    package = _package()
    tmp = file.parent.parent / f".download-{name}-{os.getpid()}"
    try:
        package.fetch_data(name, local_cache_dir=str(tmp))
        fetched = tmp / name / file.name
        if not fetched.is_file():
            raise OSError(f"pmlb.fetch_data wrote no {fetched.relative_to(tmp)}")
        digest = sha256_of(fetched)  # of what was fetched, before another process may replace it
        file.parent.mkdir(parents=True, exist_ok=True)
        os.replace(fetched, file)
        sha256_record(file).write_text(f"{digest}  {file.name}\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def locate(name: str, home: Path, download: bool) -> Path:
    """The file of set `name` in the data home `home`, downloaded by the `pmlb` package when it is
    missing and allowed; else a DatasetNotFound (a missing set) or a ValueError (an unknown name)."""
    file = path(name, home)
    if file.is_file():
        return file
    if name not in _known(home):
        raise _unknown(name, home)
    where = f"pmlb:{name}: no {file}"
    fix = (f"copy PMLB's {file.name} there (set $CTXBANDITS_DATA or pass data_home= to use another data home), or "
           "install the pmlb package (pip install pmlb) and allow downloads")
    if not download or offline():
        why = "downloading is off ($CTXBANDITS_OFFLINE is set)" if offline() else "downloading is off (download=False)"
        raise DatasetNotFound(f"{where} and {why}; {fix}")
    if _package() is None:
        raise DatasetNotFound(f"{where} and the optional package pmlb, which downloads it, is not installed; {fix}")
    try:
        _download(name, file)
    except ValueError as err:           # pmlb: "Dataset not found in PMLB."
        raise DatasetNotFound(f"{where}, and the pmlb package could not fetch it ({' '.join(str(err).split())}); "
                              "check the name in pmlb.classification_dataset_names") from None
    except OSError as err:              # requests' and urllib's errors are OSErrors
        raise DatasetNotFound(f"{where}, and the download failed ({type(err).__name__}: "
                              f"{' '.join(str(err).split())}); {fix}") from None
    return file


def read(name: str, home: Path, download: bool):
    """(the table of set `name` as a pandas DataFrame, its file): located, checked, parsed."""
    import pandas as pd

    file = locate(name, home, download)
    _check_record(file)
    try:
        table = pd.read_csv(file, sep="\t")
    except (ValueError, OSError, EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise DatasetCorrupt(f"{file}: cannot be read as PMLB's gzipped tab-separated table "
                             f"({type(err).__name__}: {' '.join(str(err).split())}); delete it and fetch it again") from None
    return table, file


# PMLB's classification sets at commit 1c4487f2 (2020-05-15) but poker and mnist: name, rows, features, classes.
SETS = """
GAMETES_Epistasis_2-Way_1000atts_0.4H_EDM-1_EDM-1_1 1600 1000 2
GAMETES_Epistasis_2-Way_20atts_0.1H_EDM-1_1 1600 20 2
GAMETES_Epistasis_2-Way_20atts_0.4H_EDM-1_1 1600 20 2
GAMETES_Epistasis_3-Way_20atts_0.2H_EDM-1_1 1600 20 2
GAMETES_Heterogeneity_20atts_1600_Het_0.4_0.2_50_EDM-2_001 1600 20 2
GAMETES_Heterogeneity_20atts_1600_Het_0.4_0.2_75_EDM-2_001 1600 20 2
Hill_Valley_with_noise 1212 100 2
Hill_Valley_without_noise 1212 100 2
adult 48842 14 2
agaricus-lepiota 8145 22 2
allbp 3772 29 3
allhyper 3771 29 4
allhypo 3770 29 3
allrep 3772 29 4
analcatdata_aids 50 4 2
analcatdata_asbestos 83 3 2
analcatdata_authorship 841 70 4
analcatdata_bankruptcy 50 6 2
analcatdata_boxing1 120 3 2
analcatdata_boxing2 132 3 2
analcatdata_creditscore 100 6 2
analcatdata_cyyoung8092 97 10 2
analcatdata_cyyoung9302 92 10 2
analcatdata_dmft 797 4 6
analcatdata_fraud 42 11 2
analcatdata_germangss 400 5 4
analcatdata_happiness 60 3 3
analcatdata_japansolvent 52 9 2
analcatdata_lawsuit 264 4 2
ann-thyroid 7200 21 3
appendicitis 106 7 2
australian 690 14 2
auto 202 25 5
backache 180 32 2
balance-scale 625 4 3
banana 5300 2 2
biomed 209 8 2
breast-cancer-wisconsin 569 30 2
breast-cancer 286 9 2
breast-w 699 9 2
breast 699 10 2
buggyCrx 690 15 2
bupa 345 6 2
calendarDOW 399 32 5
car-evaluation 1728 21 4
car 1728 6 4
cars 392 8 3
cars1 392 7 3
chess 3196 36 2
churn 5000 20 2
clean1 476 168 2
clean2 6598 168 2
cleve 303 13 2
cleveland-nominal 303 7 5
cleveland 303 13 5
cloud 108 7 4
cmc 1473 9 3
coil2000 9822 85 2
colic 368 22 2
collins 485 23 13
confidence 72 3 6
connect-4 67557 42 3
contraceptive 1473 9 3
corral 160 6 2
credit-a 690 15 2
credit-g 1000 20 2
crx 690 15 2
dermatology 366 34 6
diabetes 768 8 2
dis 3772 29 2
dna 3186 180 3
ecoli 327 7 5
fars 100968 29 8
flags 178 43 5
flare 1066 10 2
german 1000 20 2
glass 205 9 5
glass2 163 9 2
haberman 306 3 2
hayes-roth 160 4 3
heart-c 303 13 2
heart-h 294 13 2
heart-statlog 270 13 2
hepatitis 155 19 2
horse-colic 368 22 2
house-votes-84 435 16 2
hungarian 294 13 2
hypothyroid 3163 25 2
ionosphere 351 34 2
iris 150 4 3
irish 500 5 2
kddcup 494020 41 23
kr-vs-kp 3196 36 2
krkopt 28056 6 18
labor 57 16 2
led24 3200 24 10
led7 3200 7 10
letter 20000 16 26
liver-disorder 345 6 2
lupus 87 3 2
lymphography 148 18 4
magic 19020 10 2
mfeat-factors 2000 216 10
mfeat-fourier 2000 76 10
mfeat-karhunen 2000 64 10
mfeat-morphological 2000 6 10
mfeat-pixel 2000 240 10
mfeat-zernike 2000 47 10
mofn-3-7-10 1324 10 2
molecular-biology_promoters 106 58 2
monk1 556 6 2
monk2 601 6 2
monk3 554 6 2
movement_libras 360 90 15
mushroom 8124 22 2
mux6 128 6 2
new-thyroid 215 5 3
nursery 12958 8 4
optdigits 5620 64 10
page-blocks 5473 10 5
parity5+5 1124 10 2
parity5 32 5 2
pendigits 10992 16 10
phoneme 5404 5 2
pima 768 8 2
postoperative-patient-data 88 8 2
prnn_crabs 200 7 2
prnn_fglass 205 9 5
prnn_synth 250 2 2
profb 672 9 2
promoters 106 58 2
ring 7400 20 2
saheart 462 9 2
satimage 6435 36 6
schizo 340 14 3
segmentation 2310 19 7
shuttle 58000 9 7
sleep 105908 13 5
solar-flare_1 315 12 5
solar-flare_2 1066 12 6
sonar 208 60 2
soybean 675 35 18
spambase 4601 57 2
spect 267 22 2
spectf 349 44 2
splice 3188 60 3
tae 151 5 3
texture 5500 40 11
threeOf9 512 9 2
tic-tac-toe 958 9 2
titanic 2201 3 2
tokyo1 959 44 2
twonorm 7400 20 2
vehicle 846 18 4
vote 435 16 2
vowel 990 13 11
waveform-21 5000 21 3
waveform-40 5000 40 3
wdbc 569 30 2
wine-quality-red 1599 11 6
wine-quality-white 4893 11 6
wine-recognition 178 13 3
xd6 973 9 2
yeast 1479 8 9
"""
