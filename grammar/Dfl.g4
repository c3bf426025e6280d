// The DFL grammar: the only place the syntax of DFL lives.
// docs/language.md is the normative reference for what each construct means.
// The grammar is deliberately generic where sema can give a better message
// (property keys, hardware block kinds, layer operators, units): an unknown
// key is a diagnostic with a "did you mean" hint, not a syntax error.
grammar Dfl;

file : importDecl* topDecl* EOF ;

importDecl : 'import' STRING ';' ;

topDecl : networkDecl | hardwareDecl | scheduleDecl | intrinsicDecl ;

// ---- network -------------------------------------------------------------
networkDecl : 'network' name=ID '{' networkItem* '}' ;

networkItem
  : 'batch' dim=ID '=' size=INT ';'                       # batchDecl
  | 'input' name=ID shape ';'                             # inputDecl
  | name=ID '=' op=ID '(' (arg (',' arg)*)? ')' ';'       # layerDecl
  ;

shape : '[' dimSize (',' dimSize)* ']' ;
dimSize : dim=ID '=' size=INT ;

// A positional argument names a producer; a keyword argument sets a parameter.
// A second `X x Y` after a comma is the end padding of `pad = BEGIN, END`
// (no argument starts with one, so it cannot be the next argument).
arg : key=ID '=' value (',' end=DIMS)?   # keywordArg
    | ID                                 # operandArg
    ;

// ---- hardware ------------------------------------------------------------
hardwareDecl : 'hardware' name=ID '{' hardwareItem* '}' ;

hardwareItem
  : property                                              # hardwareProperty
  | kind=ID name=ID? '{' blockItem* '}'                   # hardwareBlock
  ;

// Directives inside a `level` block fix the hardware's dataflow at that level;
// a nested block is one of its buffers (`buffer NAME { holds = wgt; ... }`).
blockItem : property | directive | subBlock ;

subBlock : kind=ID name=ID? '{' property* '}' ;

// `intrinsic` is a keyword and also a level's property (`intrinsic = NAME;`).
property : key=(ID | 'intrinsic') '=' value (',' value)* ';' ;

value
  : number unit?          # quantityValue
  | DIMS                  # arrayValue
  | ID                    # wordValue
  | STRING                # stringValue
  ;

unit : ID ('/' ID)? ;
number : INT | FLOAT ;

// ---- schedule ------------------------------------------------------------
scheduleDecl : 'schedule' 'for' network=ID 'on' hardware=ID '{' scheduleItem* '}' ;

scheduleItem
  : 'segment' layers+=ID (',' layers+=ID)*
    (pipelined='pipelined' | 'split' splitDim=ID 'by' instances=INT)? ';'   # segmentDecl
  | 'layer' name=ID ('on' vectorUnit=ID)? '{' levelSchedule* '}'   # layerSchedule
  // The items of a schedule on a cluster/core DSA (GraphTurbo). Their
  // keywords (`subgraph`, `order`, `instance`; `bind`, `scope`) are
  // identifiers checked by sema, so they stay usable as names elsewhere:
  //   batch_per_iteration = 8;
  //   subgraph sg3 = a, b, c { split X by 56; }
  //   order dfs;   order sg0[0], sg0[1];
  //   instance sg3[*] { bind N 8; scope GB; }
  | property                                              # scheduleProperty
  | kind=ID name=ID '=' ID (',' ID)* ('{' graphDirective* '}' | ';')   # subGraphDecl
  | kind=ID instanceRef (',' instanceRef)* ';'            # orderDecl
  | kind=ID instanceRef '{' graphDirective* '}'           # instanceDecl
  ;

instanceRef : subGraph=ID ('[' (index=INT | all='*') ']')? ;

// `split X by 56;`, `bind N 8, C 2;`, `scope GB;` (`split` and `by` are
// keywords of a segment's split too).
graphDirective : kind=(ID | 'split') (graphArg (',' graphArg)*)? ';' ;
graphArg : first=ID second=(ID | 'by')? amount=INT? ;

levelSchedule : level=ID '{' directive* '}' ;

directive
  : 'tensor' role=ID shape ('shr' shr=INT)? ';'           # tensorDirective
  | 'stack' (step (',' step)*)? ('repl' repl=INT)? ';'    # stackDirective
  | 'update' step (',' step)* ';'                         # updateDirective
  | 'layout' role=ID shape ';'                            # layoutDirective
  ;

step : dim=ID '+=' amount=INT ;

// ---- intrinsic (syntax only for now; meaning in the intrinsic issue) ------
intrinsicDecl : 'intrinsic' name=ID '(' dimSize (',' dimSize)* ')' '{' intrinsicItem* '}' ;

intrinsicItem
  : out=access '+=' lhs=access '*' rhs=access ';'         # intrinsicCompute
  | property                                              # intrinsicProperty
  ;

access : tensor=ID '[' ID (',' ID)* ']' ;

// ---- lexer ---------------------------------------------------------------
DIMS   : [0-9]+ [ \t]* 'x' [ \t]* [0-9]+ ;   // `16 x 16`: an array shape
FLOAT  : [0-9]+ '.' [0-9]+ ([eE] [+-]? [0-9]+)? ;
INT    : [0-9]+ ;
ID     : [a-zA-Z_] [a-zA-Z_0-9]* ;
STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;
// A string missing its closing quote: one token to the end of the line, so the
// rest of the line is not lexed as stray characters (reported as E0003).
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' .)* ;

LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
WS : [ \t\r\n]+ -> skip ;
// Anything else is one bad character; the parser reports it, never the lexer.
ERROR_CHAR : . ;
