/**
 * The parts of RxJS that rxmcp uses, each imported from its own module. Every other file imports
 * RxJS from here. Run from the sources (tsx, the tests) these are the installed `rxjs`'s own
 * modules. The built package holds them instead: scripts/bundle.ts takes them from RxJS's ES
 * module build into the package's chunks, the parts used only, because importing them from the
 * installed CommonJS build (88 modules) cost a stdio server more than the rest of its start
 * (issue 24). Observables of the two copies mix freely (RxJS recognises one by its shape and
 * `Symbol.observable`, a scheduler by its interface); `instanceof` against the application's
 * RxJS classes does not hold for the package's.
 */
export { Observable } from 'rxjs/internal/Observable'
export { Subject } from 'rxjs/internal/Subject'
export { BehaviorSubject } from 'rxjs/internal/BehaviorSubject'
export { Subscription } from 'rxjs/internal/Subscription'
export { Subscriber } from 'rxjs/internal/Subscriber'
export { EMPTY } from 'rxjs/internal/observable/empty'
export { defer } from 'rxjs/internal/observable/defer'
export { timer } from 'rxjs/internal/observable/timer'
export { throwError } from 'rxjs/internal/observable/throwError'
export { from } from 'rxjs/internal/observable/from'
export { interval } from 'rxjs/internal/observable/interval'
export { of } from 'rxjs/internal/observable/of'
export { asyncScheduler } from 'rxjs/internal/scheduler/async'
// setTimeout as `asyncScheduler` reaches it: a TestScheduler's run mode replaces it with virtual time.
export { timeoutProvider } from 'rxjs/internal/scheduler/timeoutProvider'
export { catchError } from 'rxjs/internal/operators/catchError'
export { concatMap } from 'rxjs/internal/operators/concatMap'
export { filter } from 'rxjs/internal/operators/filter'
export { map } from 'rxjs/internal/operators/map'
export { mergeMap } from 'rxjs/internal/operators/mergeMap'
export { retry } from 'rxjs/internal/operators/retry'
export { share } from 'rxjs/internal/operators/share'
export { shareReplay } from 'rxjs/internal/operators/shareReplay'
export { switchMap } from 'rxjs/internal/operators/switchMap'
export { take } from 'rxjs/internal/operators/take'
export { takeUntil } from 'rxjs/internal/operators/takeUntil'
export { throwIfEmpty } from 'rxjs/internal/operators/throwIfEmpty'
export { tap } from 'rxjs/internal/operators/tap'
export { toArray } from 'rxjs/internal/operators/toArray'
export { isObservable } from 'rxjs/internal/util/isObservable'
export { firstValueFrom } from 'rxjs/internal/firstValueFrom'
export { lastValueFrom } from 'rxjs/internal/lastValueFrom'
export type { MonoTypeOperatorFunction, OperatorFunction, SchedulerAction, SchedulerLike } from 'rxjs/internal/types'
export { race } from 'rxjs/internal/observable/race'
export { merge } from 'rxjs/internal/observable/merge'
export { combineLatest } from 'rxjs/internal/observable/combineLatest'
export { distinctUntilChanged } from 'rxjs/internal/operators/distinctUntilChanged'
export { startWith } from 'rxjs/internal/operators/startWith'
export { throttleTime } from 'rxjs/internal/operators/throttleTime'
