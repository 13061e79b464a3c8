
2
xPlaceholder*
dtype0*
shape
:
2
xPlaceholder*
dtype0*
shape
: