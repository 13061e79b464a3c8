

cConst*	
value