/**
 * The parts of RxJS that rxmcp uses, each imported from its own module. `import ... from 'rxjs'`
 * loads all of RxJS under Node (about 220 CommonJS modules, the largest part of a stdio server's
 * start); these load about 35. The classes are the very ones `rxjs` exports (the same files), so
 * Observables made here and in an application mix freely. Every other file imports RxJS from here.
 */
export { Observable } from 'rxjs/internal/Observable'
export { Subject } from 'rxjs/internal/Subject'
export { BehaviorSubject } from 'rxjs/internal/BehaviorSubject'
export { Subscription } from 'rxjs/internal/Subscription'
export { Subscriber } from 'rxjs/internal/Subscriber'
export { EMPTY } from 'rxjs/internal/observable/empty'
export { from } from 'rxjs/internal/observable/from'
export { interval } from 'rxjs/internal/observable/interval'
export { of } from 'rxjs/internal/observable/of'
export { asyncScheduler } from 'rxjs/internal/scheduler/async'
export { catchError } from 'rxjs/internal/operators/catchError'
export { filter } from 'rxjs/internal/operators/filter'
export { map } from 'rxjs/internal/operators/map'
export { mergeMap } from 'rxjs/internal/operators/mergeMap'
export { tap } from 'rxjs/internal/operators/tap'
export { toArray } from 'rxjs/internal/operators/toArray'
export { isObservable } from 'rxjs/internal/util/isObservable'
export { firstValueFrom } from 'rxjs/internal/firstValueFrom'
export { lastValueFrom } from 'rxjs/internal/lastValueFrom'
export type { MonoTypeOperatorFunction, OperatorFunction, SchedulerAction, SchedulerLike } from 'rxjs/internal/types'
