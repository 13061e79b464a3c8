"""packaging.version.parse for dotted release numbers (the onnx/numpy versions compared)."""
import re


class Version:
    def __init__(self, text):
        self.text = str(text)
        self.release = tuple(int(x) for x in re.findall(r"\d+", self.text.split("+")[0])[:3])

    def __lt__(self, other):
        return self.release < other.release

    def __le__(self, other):
        return self.release <= other.release

    def __gt__(self, other):
        return self.release > other.release

    def __ge__(self, other):
        return self.release >= other.release

    def __eq__(self, other):
        return self.release == other.release

    def __repr__(self):
        return "<Version(%r)>" % self.text


def parse(text):
    return Version(text)
